// What to do when a conversation outgrows the model's context. The database always keeps
// everything; this only decides which turns the model sees.
//
//   KeepNewest (default): keep the leading system prompt and the newest turns, dropping the
//     oldest exchanges (a user turn with the replies that follow it) until the prompt plus the
//     room kept for the reply fits.
//   Refuse: do not generate; the user is told to start a new chat or change the policy.
#pragma once

#include "engine/ChatBackend.h"

#include <QString>
#include <QVector>

#include <functional>

namespace arbor::app {

enum class ContextPolicy { KeepNewest, Refuse };

QString contextPolicyName(ContextPolicy p);              // "keep-newest", "refuse"
ContextPolicy contextPolicyFromName(const QString& name);  // unknown names: KeepNewest

struct ContextFit {
    bool ok = false;
    QVector<ChatTurn> turns;  // what the model will see
    int droppedTurns = 0;     // turns left out (they stay in the database)
    int promptTokens = 0;
    QString why;              // when !ok: a sentence for the user
};

// The room kept free for the reply: max_tokens, but at most a quarter of the context.
int replyReserve(int contextLength, int maxTokens);

// Fits `turns` into `contextLength` tokens minus `reserve`. `count` returns the prompt tokens of
// a list of turns, or -1 when it cannot (then fitting fails with `countError`).
ContextFit fitContext(const QVector<ChatTurn>& turns, int contextLength, int reserve, ContextPolicy policy,
                      const std::function<int(const QVector<ChatTurn>&, QString*)>& count);

}  // namespace arbor::app
