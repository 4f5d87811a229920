# limen-portal's request portals (issue 4): included from portal.cmake.
limen_add_pytest(integration-portal-file-chooser test_portal_file_chooser.py)
limen_add_pytest(integration-portal-requests test_portal_requests.py)
limen_add_pytest(integration-portal-notification test_portal_notification.py)
