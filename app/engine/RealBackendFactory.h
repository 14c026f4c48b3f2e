// The real-engine backend for the app, chosen by the backend preference ("auto", "cpu", "gpu")
// and thread count from the settings.
#pragma once

#include "engine/ChatBackend.h"

#include <memory>

namespace arbor::app {

std::unique_ptr<ChatBackend> makeRealBackend(const QString& preference, int threads);

}  // namespace arbor::app
