# limen-portal and src/core tests (owned by the frontend).
limen_add_unit_test(test-options SOURCES unit/test-options.c)
limen_add_unit_test(test-app-info SOURCES unit/test-app-info.c)
limen_add_unit_test(test-portal-config SOURCES unit/test-portal-config.c)
limen_add_unit_test(test-fd-check SOURCES unit/test-fd-check.c)
limen_add_unit_test(test-request SOURCES unit/test-request.c)
limen_add_unit_test(test-notification-markup SOURCES unit/test-notification-markup.c)
limen_add_unit_test(test-lazy-library SOURCES unit/test-lazy-library.c)

limen_add_pytest(integration-portal-core test_portal_core.py)
limen_add_pytest(integration-portal-startup-signals test_portal_startup_signals.py)
limen_add_pytest(integration-portal-lazy-libraries test_portal_lazy_libraries.py)
limen_add_pytest(integration-portal-monitors test_portal_monitors.py)
limen_add_pytest(integration-portal-settings test_portal_settings.py)
limen_add_pytest(integration-portal-trash test_portal_trash.py)
limen_add_pytest(integration-portal-identity test_portal_identity.py)
limen_add_pytest(integration-portal-dropin test_portal_dropin.py)
# GLib's and Qt's own portal clients (network, proxy, memory and power monitors, trash,
# launching a URI, opening a file) from a bwrap sandbox
limen_add_pytest(integration-portal-gio-clients test_portal_gio_clients.py)

if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/requests.cmake)
  include(${CMAKE_CURRENT_SOURCE_DIR}/requests.cmake)
endif()

add_test(NAME translations-de
         COMMAND ${LIMEN_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/unit/check-translations.py
                 ${PROJECT_BINARY_DIR}/po/limen.pot ${PROJECT_SOURCE_DIR}/po/de.po)
set_tests_properties(translations-de PROPERTIES LABELS unit)
limen_add_pytest(integration-portal-settings-kde test_portal_settings_kde.py)

# Benchmarks (label bench, not in the default run): ours against the reference frontend.
add_executable(portal-load bench/portal-load.c)
target_link_libraries(portal-load PRIVATE PkgConfig::GLIB)
add_test(NAME bench-portal COMMAND ${LIMEN_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/bench/bench-portal.py)
set_tests_properties(bench-portal PROPERTIES LABELS bench TIMEOUT 1800
  ENVIRONMENT "LIMEN_BUILD_DIR=${PROJECT_BINARY_DIR}")
limen_add_pytest(hostile-portal test_hostile_portal.py)
# What a sandboxed app hands over that ends up run, linked or trusted on the host (issue 39).
limen_add_pytest(hostile-inputs test_hostile_inputs.py)
limen_add_pytest(integration-portal-gamemode test_portal_gamemode.py)

# Fuzz targets: the notification markup-body sanitiser (apps' markup; both daemons) and the
# sound validator's checks (apps' sound bytes; limen-validate-sound).
limen_add_fuzzer(fuzz-notification-markup fuzz-notification-markup.c 200000 LIBS limen-core)
limen_add_fuzzer(fuzz-validate-sound fuzz-validate-sound.c 300000 LIBS PkgConfig::GLIB)

# ScreenCast, RemoteDesktop, Clipboard (issue 20): limen-pw-probe lists what a PipeWire
# remote fd shows, for the OpenPipeWireRemote tests.
pkg_check_modules(PW_PROBE IMPORTED_TARGET libpipewire-0.3)
if(PW_PROBE_FOUND)
  add_executable(limen-pw-probe integration/pw-probe.c)
  target_link_libraries(limen-pw-probe PRIVATE PkgConfig::PW_PROBE)
endif()
limen_add_pytest(integration-portal-screencast test_portal_screencast.py)
limen_add_pytest(integration-portal-camera test_portal_camera.py)
# InputCapture v2 (issue 21) in front of a test backend (templates/input_capture.py).
limen_add_pytest(integration-portal-input-capture test_portal_input_capture.py)
# Usb: the [USB Devices] queries (unit), then umockdev's devices; the test process runs preloaded so that the testbed can send uevents.
pkg_check_modules(USB_GUDEV REQUIRED IMPORTED_TARGET gudev-1.0)
limen_add_unit_test(test-usb-rules SOURCES unit/test-usb-rules.c ${PROJECT_SOURCE_DIR}/src/portal/portals/usb/usb-rules.c
                    LIBS PkgConfig::USB_GUDEV)
target_include_directories(test-usb-rules PRIVATE ${PROJECT_SOURCE_DIR}/src/portal/portals/usb)
# DynamicLauncher: the allow-listed desktop entry Install writes (src/portal/launcher-entry.c).
add_library(limen-launcher-entry STATIC ${PROJECT_SOURCE_DIR}/src/portal/launcher-entry.c)
target_link_libraries(limen-launcher-entry PUBLIC limen-core)
target_include_directories(limen-launcher-entry PUBLIC ${PROJECT_SOURCE_DIR}/src/portal)
limen_add_unit_test(test-launcher-entry SOURCES unit/test-launcher-entry.c LIBS limen-launcher-entry)
# Fuzz target for the same (apps' desktop entries).
limen_add_fuzzer(fuzz-launcher-entry fuzz-launcher-entry.c 100000 LIBS limen-launcher-entry)
find_program(UMOCKDEV_WRAPPER umockdev-wrapper)
if(UMOCKDEV_WRAPPER)
  limen_add_pytest(integration-portal-usb test_portal_usb.py WRAPPER ${UMOCKDEV_WRAPPER})
endif()
limen_add_pytest(integration-harness-isolation test_harness_isolation.py)
