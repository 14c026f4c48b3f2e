// What the model sees of a stored conversation: its turns up to a message, and the sampler
// settings kept in conversations.sampler_json. Runs on the store thread.
#pragma once

#include "chat/StoreThread.h"
#include "engine/ChatBackend.h"
#include "store/ChatStore.h"

namespace arbor::app {

// Sampler settings as stored in conversations.sampler_json; absent keys take the defaults
// (an absent seed: a random one).
GenerationParams paramsFrom(const QString& samplerJson);

// The turns the model sees for a reply to `upto`: the system prompt, then the chain of
// messages from the root down to `upto`. Empty failed replies are left out.
QVector<ChatTurn> turnsUpTo(StoreContext& s, const ConversationRow& conv, qint64 upto);

}  // namespace arbor::app
