# Desktop integration files, their install() rules and the Debian package (CPack DEB).
# Included at the end of the top-level CMakeLists.txt when the app is built. Installs, under
# CMAKE_INSTALL_PREFIX (/usr in the .deb):
#   bin/arbor, bin/arbor-cli                      (install() rules next to the targets)
#   share/applications/org.arborchat.Arbor.desktop
#   share/metainfo/org.arborchat.Arbor.metainfo.xml
#   share/mime/packages/org.arborchat.Arbor.xml  (application/x-gguf)
#   share/icons/hicolor/scalable/apps/org.arborchat.Arbor.svg, and NxN/apps/*.png rendered
#     from it at build time with rsvg-convert (librsvg2-bin)
#   share/arbor/models/stories260K.gguf + README.md (the demo model, MIT; demoModelPath())
#
#   cmake --build build && (cd build && cpack -G DEB)   ->  build/arbor_<version>_<arch>.deb
set(ARBOR_APP_ID org.arborchat.Arbor)
set(_arbor_pkg ${PROJECT_SOURCE_DIR}/packaging)

# Everything of ours is linked statically and Qt comes from the system: the installed binaries
# need no RUNPATH (qt_standard_project_setup() would give them $ORIGIN/../lib; Debian forbids it).
set_target_properties(arbor arbor-cli PROPERTIES INSTALL_RPATH "")

install(FILES ${_arbor_pkg}/${ARBOR_APP_ID}.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
install(FILES ${_arbor_pkg}/${ARBOR_APP_ID}.metainfo.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
install(FILES ${_arbor_pkg}/${ARBOR_APP_ID}.mime.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/mime/packages
        RENAME ${ARBOR_APP_ID}.xml)
install(FILES ${_arbor_pkg}/${ARBOR_APP_ID}.svg DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
install(FILES ${PROJECT_SOURCE_DIR}/resources/models/stories260K.gguf ${PROJECT_SOURCE_DIR}/resources/models/README.md
        DESTINATION ${CMAKE_INSTALL_DATADIR}/arbor/models)

# -- hicolor PNGs, rendered from the SVG so the two never drift apart
set(ARBOR_ICON_SIZES 16 22 24 32 48 64 128 256 512)
find_program(ARBOR_RSVG_CONVERT rsvg-convert)
if(ARBOR_RSVG_CONVERT)
  set(_arbor_pngs "")
  foreach(size IN LISTS ARBOR_ICON_SIZES)
    set(_dir ${PROJECT_BINARY_DIR}/icons/hicolor/${size}x${size}/apps)
    set(_png ${_dir}/${ARBOR_APP_ID}.png)
    add_custom_command(OUTPUT ${_png}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${_dir}
      COMMAND ${ARBOR_RSVG_CONVERT} --width ${size} --height ${size} --output ${_png} ${_arbor_pkg}/${ARBOR_APP_ID}.svg
      DEPENDS ${_arbor_pkg}/${ARBOR_APP_ID}.svg
      COMMENT "Rendering the ${size}x${size} icon" VERBATIM)
    list(APPEND _arbor_pngs ${_png})
    install(FILES ${_png} DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps)
  endforeach()
  add_custom_target(arbor_icons ALL DEPENDS ${_arbor_pngs})
else()
  message(WARNING "rsvg-convert (librsvg2-bin) not found: only the scalable icon will be installed")
endif()

# -- the Debian package
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME arbor)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "The Arbor developers")
set(CPACK_PACKAGE_CONTACT "The Arbor developers <arbor@arborchat.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "chat with large language models that run locally")
# One line each in the control file (CPack indents them; Debian wants lines under 80 columns).
string(JOIN "\n" CPACK_PACKAGE_DESCRIPTION
  "Arbor is a Qt Quick desktop app for chatting with GGUF language models on"
  "this computer, through its own inference engine: on the GPU where one is"
  "found, on the CPU otherwise. Chats are kept as trees that never lose a"
  "branch. Includes arbor-cli and a tiny demo model.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://arborchat.org/")
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
# Shared libraries through dpkg-shlibdeps. The QML modules, the SQLite driver and the platform
# plugins are loaded at run time, where shlibdeps cannot see them; Debian splits them into
# packages of their own, so they are listed here. CUDA, when built in, is linked statically
# and the driver (libcuda.so.1) is opened at run time, so nothing here names a CUDA package.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(ARBOR_DEB_RUNTIME_DEPENDS
  qml6-module-qtqml
  qml6-module-qtqml-models
  qml6-module-qtqml-workerscript
  qml6-module-qtquick
  qml6-module-qtquick-controls
  qml6-module-qtquick-templates
  qml6-module-qtquick-layouts
  qml6-module-qtquick-window
  qml6-module-qtquick-dialogs
  qml6-module-qtquick-shapes
  qml6-module-qt-labs-folderlistmodel
  qml6-module-qt-labs-platform
  libqt6sql6-sqlite
  libqt6svg6
  qt6-qpa-plugins)
string(JOIN ", " CPACK_DEBIAN_PACKAGE_DEPENDS ${ARBOR_DEB_RUNTIME_DEPENDS})
# The desktop database, MIME database and icon cache are refreshed by these packages' dpkg
# triggers, so the package needs no maintainer scripts. Wayland sessions want qt6-wayland.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "shared-mime-info, desktop-file-utils, hicolor-icon-theme, qt6-wayland")
include(CPack)
