# limen-documents tests (document store, permission store, FUSE).
limen_add_unit_test(test-documents-store SOURCES unit/test-documents-store.c LIBS limen-documents-lib)
add_executable(test-documents-stress unit/test-documents-stress.c)
target_link_libraries(test-documents-stress PRIVATE PkgConfig::GLIB)

limen_add_pytest(integration-permission-store test_permission_store.py)
limen_add_pytest(integration-documents test_documents.py TIMEOUT 900)
limen_add_pytest(integration-documents-stress test_documents_stress.py TIMEOUT 300)
