#include "engine/RealBackendFactory.h"

#include "engine/EngineChatBackend.h"

namespace arbor::app {

std::unique_ptr<ChatBackend> makeRealBackend(const QString& preference, int threads) {
    return std::make_unique<EngineChatBackend>(preference, threads);
}

}  // namespace arbor::app
