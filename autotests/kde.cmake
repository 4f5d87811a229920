# limen-kde tests: QTest (offscreen) for the shim, pytest on a private bus for the backend.
limen_add_pytest(kde-settings test_kde_settings.py TIMEOUT 300)
limen_add_pytest(kde-dialogs test_kde_dialogs.py TIMEOUT 600)
limen_add_pytest(kde-services test_kde_services.py TIMEOUT 600)
add_test(NAME bench-kde COMMAND ${LIMEN_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/bench/bench-kde.py)
set_tests_properties(bench-kde PROPERTIES LABELS bench TIMEOUT 600
  ENVIRONMENT "LIMEN_BUILD_DIR=${PROJECT_BINARY_DIR};LIMEN_SOURCE_DIR=${PROJECT_SOURCE_DIR};PYTHONDONTWRITEBYTECODE=1")
limen_add_pytest(kde-screens test_kde_screens.py TIMEOUT 300)
