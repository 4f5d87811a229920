# limen-documents tests (document store, permission store, FUSE).
limen_add_pytest(integration-permission-store test_permission_store.py)
limen_add_pytest(integration-documents test_documents.py TIMEOUT 900)
