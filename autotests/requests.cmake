# limen-portal's request portals (issue 4): included from portal.cmake.
limen_add_pytest(integration-portal-file-chooser test_portal_file_chooser.py)
limen_add_pytest(integration-portal-requests test_portal_requests.py)
limen_add_pytest(integration-portal-dropin-requests test_portal_dropin_requests.py)
# What upstream's newest frontend does (issue 39 item 6): documents in the app's own view, Register wants an installed app
limen_add_pytest(integration-portal-app-view test_portal_app_view.py)
limen_add_pytest(integration-portal-versions test_portal_versions.py)
limen_add_pytest(integration-portal-notification test_portal_notification.py)

# Benchmark (label bench): request round trip, ours vs the reference frontend.
add_executable(mock-file-chooser bench/mock-file-chooser.c)
target_link_libraries(mock-file-chooser PRIVATE PkgConfig::GLIB)
add_test(NAME bench-requests COMMAND ${LIMEN_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/bench/bench-requests.py)
set_tests_properties(bench-requests PROPERTIES LABELS bench TIMEOUT 1200
  ENVIRONMENT "LIMEN_BUILD_DIR=${PROJECT_BINARY_DIR};PYTHONDONTWRITEBYTECODE=1")
limen_add_pytest(integration-portal-dynamic-launcher test_portal_dynamic_launcher.py)
limen_add_pytest(integration-portal-reference-backends test_portal_reference_backends.py)
limen_add_pytest(integration-portal-location test_portal_location.py)
limen_add_pytest(integration-portal-background-v2 test_portal_background_v2.py)
limen_add_pytest(integration-portal-open-uri-v5 test_portal_open_uri_v5.py)
