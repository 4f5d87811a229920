# limen-kde tests: QTest (offscreen) for the shim, pytest on a private bus for the backend.
limen_add_pytest(kde-settings test_kde_settings.py TIMEOUT 300)
limen_add_pytest(kde-dialogs test_kde_dialogs.py TIMEOUT 600)
limen_add_pytest(kde-services test_kde_services.py TIMEOUT 600)
