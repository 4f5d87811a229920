# How Limen installs (owned by packaging): the layout a DESTDIR install stages for two
# prefixes, the refusal of another prefix at install time, the uninstall target, the
# shipped data files, and no build path in the binaries.
limen_add_pytest(integration-install-layout test_install_layout.py TIMEOUT 1200)
# limen-kde installed without its limen.notifyrc (a broken package): notifications still
# reach the server.
if(LIMEN_BUILD_KDE)
  limen_add_pytest(integration-kde-notification-direct test_kde_notification_direct.py)
endif()
