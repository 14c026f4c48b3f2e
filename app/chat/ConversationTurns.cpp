#include "chat/ConversationTurns.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>

namespace arbor::app {

GenerationParams paramsFrom(const QString& samplerJson) {
    GenerationParams p;
    const QJsonObject o = QJsonDocument::fromJson(samplerJson.toUtf8()).object();
    p.temperature = o.value(QLatin1String("temperature")).toDouble(p.temperature);
    p.topK = o.value(QLatin1String("top_k")).toInt(p.topK);
    p.topP = o.value(QLatin1String("top_p")).toDouble(p.topP);
    p.minP = o.value(QLatin1String("min_p")).toDouble(p.minP);
    p.repeatPenalty = o.value(QLatin1String("repeat_penalty")).toDouble(p.repeatPenalty);
    p.maxTokens = o.value(QLatin1String("max_tokens")).toInt(p.maxTokens);
    p.enableThinking = o.value(QLatin1String("enable_thinking")).toBool(p.enableThinking);
    const QJsonValue seed = o.value(QLatin1String("seed"));
    p.seed = seed.isDouble() && seed.toDouble() >= 0 ? quint64(seed.toDouble()) : QRandomGenerator::global()->generate64();
    return p;
}

QVector<ChatTurn> turnsUpTo(StoreContext& s, const ConversationRow& conv, qint64 upto) {
    QVector<ChatTurn> chain;
    qint64 id = upto;
    while (id && chain.size() < 100000) {
        MessageRow m;
        if (!s.chats.message(id, &m)) break;
        if (!(m.role == QLatin1String("assistant") && m.content.isEmpty())) chain.push_front({m.role, m.content});
        id = m.parentId;
    }
    if (!conv.systemPrompt.trimmed().isEmpty()) chain.push_front({QStringLiteral("system"), conv.systemPrompt});
    return chain;
}

}  // namespace arbor::app
