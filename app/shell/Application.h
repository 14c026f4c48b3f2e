// Start-up of the `arbor` GUI: options, data folder, database, settings, model library, QML,
// and the --screenshot path. main.cpp only calls runApplication().
#pragma once

namespace arbor::app {

// The application id used for the .desktop file, AppStream metainfo, icon and MIME XML.
inline constexpr const char* kAppId = "org.arborchat.Arbor";

int runApplication(int argc, char** argv);

}  // namespace arbor::app
