# limen-kde tests: QTest (offscreen) for the shim, pytest on a private bus for the backend.
# Imported Qt/KF5 targets and languages are directory-scoped: set them up here too.
enable_language(CXX)
set(CMAKE_CXX_STANDARD 17)
find_package(ECM 5.103 REQUIRED NO_MODULE)
list(APPEND CMAKE_MODULE_PATH ${ECM_MODULE_PATH})
find_package(Qt5 5.15 REQUIRED COMPONENTS Core Gui Widgets DBus PrintSupport Test)
find_package(XCB REQUIRED COMPONENTS XCB)
find_package(KF5 5.103 REQUIRED COMPONENTS KIO I18n Notifications WindowSystem Config Service
                                           WidgetsAddons CoreAddons XmlGui)
find_package(KF5Wayland 5.103 REQUIRED)

add_executable(test-kde-shim qt/test-kde-shim.cpp)
target_link_libraries(test-kde-shim PRIVATE limen-qt-objects Qt5::Test)
set_target_properties(test-kde-shim PROPERTIES AUTOMOC ON)
add_test(NAME qt-kde-shim COMMAND test-kde-shim)
set_tests_properties(qt-kde-shim PROPERTIES LABELS qt TIMEOUT 120
  ENVIRONMENT "QT_QPA_PLATFORM=offscreen;LIMEN_ARTIFACTS=${PROJECT_BINARY_DIR}/autotests/artifacts/kde;LANGUAGE=;LC_ALL=C.UTF-8;ASAN_OPTIONS=detect_leaks=0:exitcode=66")
limen_add_pytest(kde-settings test_kde_settings.py TIMEOUT 300)
limen_add_pytest(kde-dialogs test_kde_dialogs.py TIMEOUT 600)
limen_add_pytest(kde-services test_kde_services.py TIMEOUT 600)
add_test(NAME bench-kde COMMAND ${LIMEN_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/bench/bench-kde.py)
set_tests_properties(bench-kde PROPERTIES LABELS bench TIMEOUT 1200
  ENVIRONMENT "LIMEN_BUILD_DIR=${PROJECT_BINARY_DIR};LIMEN_SOURCE_DIR=${PROJECT_SOURCE_DIR};PYTHONDONTWRITEBYTECODE=1")
limen_add_pytest(kde-screens test_kde_screens.py TIMEOUT 300)
limen_add_pytest(kde-frontends test_kde_frontends.py TIMEOUT 300)
limen_add_pytest(kde-hostile test_kde_hostile.py TIMEOUT 300)
limen_add_pytest(kde-screenshot test_kde_screenshot.py TIMEOUT 600)
limen_add_pytest(kde-lockdown test_kde_lockdown.py TIMEOUT 300)
limen_add_pytest(kde-print test_kde_print.py TIMEOUT 600)
limen_add_pytest(kde-wallpaper-background test_kde_wallpaper_background.py TIMEOUT 600)
add_executable(test-kde-shim-part2 qt/test-kde-shim-part2.cpp)
target_link_libraries(test-kde-shim-part2 PRIVATE limen-qt-objects Qt5::Test Qt5::PrintSupport)
set_target_properties(test-kde-shim-part2 PROPERTIES AUTOMOC ON)
add_test(NAME qt-kde-shim-part2 COMMAND test-kde-shim-part2)
set_tests_properties(qt-kde-shim-part2 PROPERTIES LABELS qt TIMEOUT 120
  ENVIRONMENT "QT_QPA_PLATFORM=offscreen;LIMEN_ARTIFACTS=${PROJECT_BINARY_DIR}/autotests/artifacts/kde;LANGUAGE=;LC_ALL=C.UTF-8;ASAN_OPTIONS=detect_leaks=0:exitcode=66;DISPLAY=;WAYLAND_DISPLAY=")
add_test(NAME bench-kde-screenshot COMMAND ${LIMEN_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/bench/bench-kde-screenshot.py)
set_tests_properties(bench-kde-screenshot PROPERTIES LABELS bench TIMEOUT 600
  ENVIRONMENT "LIMEN_BUILD_DIR=${PROJECT_BINARY_DIR};LIMEN_SOURCE_DIR=${PROJECT_SOURCE_DIR};PYTHONDONTWRITEBYTECODE=1")
limen_add_pytest(kde-frontends-part2 test_kde_frontends_part2.py TIMEOUT 600)
limen_add_pytest(kde-qt-clients test_kde_qt_clients.py TIMEOUT 600)

# wayland: parents through xdg-foreign: a plain wayland-client toplevel of ours exports its
# handle, limen-kde (Qt on kwin_wayland --virtual) imports it; KWin's scripting says who is
# whose transient.
find_package(PkgConfig REQUIRED)
pkg_check_modules(WAYLAND_CLIENT REQUIRED IMPORTED_TARGET wayland-client)
pkg_get_variable(WAYLAND_PROTOCOLS_DIR wayland-protocols pkgdatadir)
pkg_get_variable(WAYLAND_SCANNER wayland-scanner wayland_scanner)
set(_limen_wl_gen ${CMAKE_CURRENT_BINARY_DIR}/wayland-client)
file(MAKE_DIRECTORY ${_limen_wl_gen})
set(_limen_wl_sources)
foreach(_proto stable/xdg-shell/xdg-shell unstable/xdg-foreign/xdg-foreign-unstable-v2)
  get_filename_component(_name ${_proto} NAME)
  set(_xml ${WAYLAND_PROTOCOLS_DIR}/${_proto}.xml)
  add_custom_command(OUTPUT ${_limen_wl_gen}/${_name}-client-protocol.h ${_limen_wl_gen}/${_name}-protocol.c
    COMMAND ${WAYLAND_SCANNER} client-header ${_xml} ${_limen_wl_gen}/${_name}-client-protocol.h
    COMMAND ${WAYLAND_SCANNER} private-code ${_xml} ${_limen_wl_gen}/${_name}-protocol.c
    DEPENDS ${_xml} VERBATIM)
  list(APPEND _limen_wl_sources ${_limen_wl_gen}/${_name}-client-protocol.h ${_limen_wl_gen}/${_name}-protocol.c)
endforeach()
add_executable(limen-wayland-parent wayland-client/limen-wayland-parent.c ${_limen_wl_sources})
target_include_directories(limen-wayland-parent PRIVATE ${_limen_wl_gen})
target_link_libraries(limen-wayland-parent PRIVATE PkgConfig::WAYLAND_CLIENT)
limen_add_pytest(kde-wayland test_kde_wayland.py TIMEOUT 300)
# Screen sharing: a probe window of a known colour that reports its input and uses the
# clipboard, on kwin_wayland --virtual with PipeWire (integration/wayland_session.py).
add_executable(limen-wayland-probe wayland-client/limen-wayland-probe.c
               ${_limen_wl_gen}/xdg-shell-client-protocol.h ${_limen_wl_gen}/xdg-shell-protocol.c)
target_include_directories(limen-wayland-probe PRIVATE ${_limen_wl_gen})
target_link_libraries(limen-wayland-probe PRIVATE PkgConfig::WAYLAND_CLIENT)
limen_add_pytest(kde-screencast test_kde_screencast.py TIMEOUT 600)
limen_add_pytest(kde-screencast-revoke test_screencast_revoke_kwin.py TIMEOUT 600)
# Do Not Disturb while sharing, a window found again after its app restarted, "All screens"
limen_add_pytest(kde-screencast-everyday test_kde_screencast_everyday.py TIMEOUT 900)
limen_add_pytest(kde-screencast-preview test_kde_screencast_preview.py TIMEOUT 600)
# a real browser shares a window through limen-portal + limen-kde on that session
limen_add_pytest(kde-browser test_kde_browser.py TIMEOUT 300)
limen_add_pytest(kde-background-wayland test_kde_background_wayland.py TIMEOUT 300)
# Screen casting against Debian's xdg-desktop-portal + xdg-desktop-portal-kde on the same
# headless session: first frame after Start, CPU per second of a running stream.
add_test(NAME bench-screencast COMMAND ${LIMEN_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/bench/bench-screencast.py)
set_tests_properties(bench-screencast PROPERTIES LABELS bench TIMEOUT 1200
  ENVIRONMENT "LIMEN_BUILD_DIR=${PROJECT_BINARY_DIR};LIMEN_SOURCE_DIR=${PROJECT_SOURCE_DIR};PYTHONDONTWRITEBYTECODE=1")

# Logout inhibition: a small XSMP session manager (libSM's Sms* API) stands in for ksmserver.
pkg_check_modules(XSMP_TEST REQUIRED IMPORTED_TARGET sm ice)
add_executable(xsmp-test-manager xsmp-test-manager.c)
target_link_libraries(xsmp-test-manager PRIVATE PkgConfig::XSMP_TEST PkgConfig::GLIB)
limen_add_pytest(kde-inhibit-logout test_kde_inhibit_logout.py TIMEOUT 300)
limen_add_pytest(kde-first-dialog test_kde_first_dialog.py TIMEOUT 300)
# limen-kde's kdeglobals reader (plain C, no Qt).
limen_add_unit_test(test-kdeglobals SOURCES unit/test-kdeglobals.c ${PROJECT_SOURCE_DIR}/kde-backend/kdeglobals.c LIBS m)
target_include_directories(test-kdeglobals PRIVATE ${PROJECT_SOURCE_DIR}/kde-backend)

limen_add_pytest(kde-many-files test_kde_many_files.py TIMEOUT 600)
limen_add_pytest(kde-accept-while-listing test_kde_accept_while_listing.py TIMEOUT 900)
limen_add_pytest(kde-remote-files test_kde_remote_files.py TIMEOUT 600)
add_test(NAME bench-kde-many-files COMMAND ${LIMEN_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/bench/bench-kde-many-files.py)
set_tests_properties(bench-kde-many-files PROPERTIES LABELS bench TIMEOUT 3600
  ENVIRONMENT "LIMEN_BUILD_DIR=${PROJECT_BINARY_DIR};LIMEN_SOURCE_DIR=${PROJECT_SOURCE_DIR};PYTHONDONTWRITEBYTECODE=1")

# Preloading the Qt shim (kde-backend/shim.c): a QObject-constructor guard, LD_PRELOADed.
add_library(limen-preload-guard MODULE preload/preload-guard.c)
set_target_properties(limen-preload-guard PROPERTIES PREFIX "" LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
target_link_libraries(limen-preload-guard PRIVATE ${CMAKE_DL_LIBS})
limen_add_pytest(kde-preload test_kde_preload.py TIMEOUT 300)
# GlobalShortcuts against a real kglobalaccel5 on Xvfb, through limen-portal and limen-kde.
limen_add_pytest(kde-global-shortcuts test_global_shortcuts.py TIMEOUT 600)
limen_add_pytest(kde-global-shortcuts-revoke test_global_shortcuts_revoke.py TIMEOUT 600)
pkg_check_modules(XKBCOMMON_TEST REQUIRED IMPORTED_TARGET xkbcommon)
limen_add_unit_test(test-shortcut-keys SOURCES unit/test-shortcut-keys.c ${PROJECT_SOURCE_DIR}/kde-backend/shortcut-keys.c
                    LIBS PkgConfig::XKBCOMMON_TEST)
target_include_directories(test-shortcut-keys PRIVATE ${PROJECT_SOURCE_DIR}/kde-backend)
target_compile_definitions(test-shortcut-keys PRIVATE LIMEN_TEST_LOCALEDIR="${PROJECT_BINARY_DIR}/locale")
add_dependencies(test-shortcut-keys translations)
# A key chord typed into kwin_wayland through its fake input protocol (GlobalShortcuts' test).
set(_limen_fake_xml /usr/share/plasma-wayland-protocols/fake-input.xml)
add_custom_command(OUTPUT ${_limen_wl_gen}/fake-input-client-protocol.h ${_limen_wl_gen}/fake-input-protocol.c
  COMMAND ${WAYLAND_SCANNER} client-header ${_limen_fake_xml} ${_limen_wl_gen}/fake-input-client-protocol.h
  COMMAND ${WAYLAND_SCANNER} private-code ${_limen_fake_xml} ${_limen_wl_gen}/fake-input-protocol.c
  DEPENDS ${_limen_fake_xml} VERBATIM)
add_executable(limen-wayland-keys wayland-client/limen-wayland-keys.c ${_limen_wl_gen}/fake-input-client-protocol.h
               ${_limen_wl_gen}/fake-input-protocol.c)
target_include_directories(limen-wayland-keys PRIVATE ${_limen_wl_gen})
target_link_libraries(limen-wayland-keys PRIVATE PkgConfig::WAYLAND_CLIENT)
# An app raising its window with GlobalShortcuts' activation token (xdg_activation_v1).
set(_limen_activation_xml ${WAYLAND_PROTOCOLS_DIR}/staging/xdg-activation/xdg-activation-v1.xml)
add_custom_command(OUTPUT ${_limen_wl_gen}/xdg-activation-v1-client-protocol.h ${_limen_wl_gen}/xdg-activation-v1-protocol.c
  COMMAND ${WAYLAND_SCANNER} client-header ${_limen_activation_xml} ${_limen_wl_gen}/xdg-activation-v1-client-protocol.h
  COMMAND ${WAYLAND_SCANNER} private-code ${_limen_activation_xml} ${_limen_wl_gen}/xdg-activation-v1-protocol.c
  DEPENDS ${_limen_activation_xml} VERBATIM)
add_executable(limen-wayland-activate wayland-client/limen-wayland-activate.c
               ${_limen_wl_gen}/xdg-shell-client-protocol.h ${_limen_wl_gen}/xdg-shell-protocol.c
               ${_limen_wl_gen}/xdg-activation-v1-client-protocol.h ${_limen_wl_gen}/xdg-activation-v1-protocol.c)
target_include_directories(limen-wayland-activate PRIVATE ${_limen_wl_gen})
target_link_libraries(limen-wayland-activate PRIVATE PkgConfig::WAYLAND_CLIENT)
# The module's token client against compositors of the test's own (libwayland-server).
pkg_check_modules(WAYLAND_SERVER_TEST REQUIRED IMPORTED_TARGET wayland-server)
add_custom_command(OUTPUT ${_limen_wl_gen}/xdg-activation-v1-server-protocol.h
  COMMAND ${WAYLAND_SCANNER} server-header ${_limen_activation_xml} ${_limen_wl_gen}/xdg-activation-v1-server-protocol.h
  DEPENDS ${_limen_activation_xml} VERBATIM)
limen_add_unit_test(test-wayland-activation SOURCES unit/test-wayland-activation.c
                    ${_limen_wl_gen}/xdg-activation-v1-server-protocol.h ${_limen_wl_gen}/xdg-activation-v1-protocol.c
                    LIBS PkgConfig::WAYLAND_SERVER_TEST ${CMAKE_DL_LIBS})
target_include_directories(test-wayland-activation PRIVATE ${_limen_wl_gen} ${PROJECT_SOURCE_DIR}/kde-backend/wayland)
target_compile_definitions(test-wayland-activation PRIVATE LIMEN_WAYLAND_MODULE="$<TARGET_FILE:limen-kde-wayland>")
add_dependencies(test-wayland-activation limen-kde-wayland)
limen_add_pytest(kde-portal-notification-v2 test_portal_notification_v2.py TIMEOUT 600)
# DynamicLauncher: limen-kde's launcher dialog behind limen-portal, a bwrap and a host caller.
limen_add_pytest(kde-dynamic-launcher test_kde_dynamic_launcher.py TIMEOUT 900)
# A KDE app's notification from inside a Flatpak sandbox (KNotification's portal backend).
add_executable(knotification-client qt/knotification-client.cpp)
target_link_libraries(knotification-client PRIVATE KF5::Notifications Qt5::Gui)
add_executable(sycoca-probe qt/sycoca-probe.cpp)
target_link_libraries(sycoca-probe PRIVATE KF5::Service Qt5::Core)
add_executable(test-kde-launcher qt/test-kde-launcher.cpp)
target_link_libraries(test-kde-launcher PRIVATE limen-qt-objects Qt5::Test)
set_target_properties(test-kde-launcher PROPERTIES AUTOMOC ON)
add_test(NAME qt-kde-launcher COMMAND test-kde-launcher)
set_tests_properties(qt-kde-launcher PROPERTIES LABELS qt TIMEOUT 120
  ENVIRONMENT "QT_QPA_PLATFORM=offscreen;LANGUAGE=;LC_ALL=C.UTF-8;ASAN_OPTIONS=detect_leaks=0:exitcode=66")
add_test(NAME bench-kde-launcher COMMAND ${LIMEN_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/bench/bench-kde-launcher.py)
set_tests_properties(bench-kde-launcher PROPERTIES LABELS bench TIMEOUT 600
  ENVIRONMENT "LIMEN_BUILD_DIR=${PROJECT_BINARY_DIR};LIMEN_SOURCE_DIR=${PROJECT_SOURCE_DIR};PYTHONDONTWRITEBYTECODE=1")
# A launcher a sandboxed app installed, started through KIO (kio-launch-probe) and GIO.
add_executable(kio-launch-probe qt/kio-launch-probe.cpp)
target_link_libraries(kio-launch-probe PRIVATE KF5::KIOGui KF5::Service Qt5::Gui)
limen_add_pytest(kde-dynamic-launcher-launch test_portal_dynamic_launcher_launch.py)

# The permissions page (kde-backend/kcm), clicked through by test_kcm_permissions.py.
find_package(KF5 5.103 REQUIRED COMPONENTS ConfigWidgets)
add_executable(kcm-permissions-driver qt/kcm-permissions-driver.cpp)
target_link_libraries(kcm-permissions-driver PRIVATE limen-permissions-page Qt5::Test)
target_compile_definitions(kcm-permissions-driver PRIVATE QT_NO_KEYWORDS)
limen_add_pytest(integration-kcm-permissions test_kcm_permissions.py)
# limen-permissions is built with the page (kde-backend/kcm); its test reads limen-documents'
# store, so it needs both.
if(LIMEN_BUILD_DOCUMENTS)
  limen_add_pytest(integration-permissions-cli test_permissions_cli.py)
endif()

# One option, one table: every core table is checked against by a daemon, limen-kde keeps no
# table or validator of its own, no daemon re-checks parent_window or restore_data.
add_test(NAME unit-kde-options-tables
         COMMAND ${LIMEN_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/unit/check-option-tables.py ${PROJECT_SOURCE_DIR})
set_tests_properties(unit-kde-options-tables PROPERTIES LABELS unit)
