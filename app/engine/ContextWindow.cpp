#include "engine/ContextWindow.h"

namespace arbor::app {

QString contextPolicyName(ContextPolicy p) {
    return p == ContextPolicy::Refuse ? QStringLiteral("refuse") : QStringLiteral("keep-newest");
}

ContextPolicy contextPolicyFromName(const QString& name) {
    return name == QLatin1String("refuse") ? ContextPolicy::Refuse : ContextPolicy::KeepNewest;
}

int replyReserve(int contextLength, int maxTokens) {
    const int quarter = contextLength / 4;
    return maxTokens > 0 ? std::min(maxTokens, quarter) : quarter;
}

ContextFit fitContext(const QVector<ChatTurn>& turns, int contextLength, int reserve, ContextPolicy policy,
                      const std::function<int(const QVector<ChatTurn>&, QString*)>& count) {
    ContextFit fit;
    const int budget = contextLength - reserve;
    QString why;
    const int all = count(turns, &why);
    if (all < 0) {
        fit.why = why;
        return fit;
    }
    if (all <= budget) {
        fit.ok = true;
        fit.turns = turns;
        fit.promptTokens = all;
        return fit;
    }
    if (policy == ContextPolicy::Refuse) {
        fit.why = QStringLiteral("This conversation needs %1 tokens, but the model's context holds %2 (with %3 kept for the reply). "
                                 "Start a new chat, or let Arbor drop the oldest turns (Settings, context overflow).")
                      .arg(all)
                      .arg(contextLength)
                      .arg(reserve);
        return fit;
    }

    // The leading system turns stay; the rest is cut at exchange starts (user turns).
    int head = 0;
    while (head < turns.size() && turns[head].role == QLatin1String("system")) ++head;
    QVector<int> starts;  // indices where a droppable prefix may end
    for (int i = head + 1; i < turns.size(); ++i)
        if (turns[i].role == QLatin1String("user")) starts << i;
    auto keepFrom = [&](int from) {
        QVector<ChatTurn> kept = turns.mid(0, head);
        kept += turns.mid(from);
        return kept;
    };
    // Fewer tokens the more is dropped: binary search the smallest cut that fits.
    int lo = 0, hi = int(starts.size()) - 1, best = -1, bestTokens = 0;
    while (lo <= hi) {
        const int mid = (lo + hi) / 2;
        const int n = count(keepFrom(starts[mid]), &why);
        if (n < 0) {
            fit.why = why;
            return fit;
        }
        if (n <= budget) {
            best = mid;
            bestTokens = n;
            hi = mid - 1;
        } else {
            lo = mid + 1;
        }
    }
    if (best < 0) {
        const QVector<ChatTurn> last = keepFrom(starts.isEmpty() ? head : starts.last());
        const int n = count(last, &why);
        fit.why = QStringLiteral("The last message needs %1 tokens with the system prompt, but the model's context holds %2 "
                                 "(with %3 kept for the reply). Shorten it or use a model with a longer context.")
                      .arg(n)
                      .arg(contextLength)
                      .arg(reserve);
        return fit;
    }
    fit.ok = true;
    fit.turns = keepFrom(starts[best]);
    fit.droppedTurns = int(turns.size() - fit.turns.size());
    fit.promptTokens = bestTokens;
    return fit;
}

}  // namespace arbor::app
