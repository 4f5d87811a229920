# limen-documents tests (document store, permission store, FUSE).
limen_add_unit_test(test-documents-store SOURCES unit/test-documents-store.c LIBS limen-documents-lib)
limen_add_unit_test(test-documents-lazy SOURCES unit/test-documents-lazy.c LIBS limen-documents-lib)
limen_add_unit_test(test-documents-import SOURCES unit/test-documents-import.c LIBS limen-documents-lib)
limen_add_unit_test(test-documents-journal SOURCES unit/test-documents-journal.c LIBS limen-documents-lib)
limen_add_unit_test(test-documents-recover SOURCES unit/test-documents-recover.c LIBS limen-documents-lib)
limen_add_unit_test(test-documents-marshal SOURCES unit/test-documents-marshal.c LIBS limen-documents-lib)
limen_add_unit_test(test-app-access SOURCES unit/test-app-access.c LIBS limen-documents-lib)
limen_add_unit_test(test-documents-proc-stat SOURCES unit/test-documents-proc-stat.c LIBS limen-core)
add_executable(test-documents-stress unit/test-documents-stress.c)
target_link_libraries(test-documents-stress PRIVATE PkgConfig::GLIB)

limen_add_pytest(integration-permission-store test_permission_store.py)
limen_add_pytest(integration-documents test_documents.py TIMEOUT 900)
limen_add_pytest(integration-documents-stress test_documents_stress.py TIMEOUT 300)
limen_add_pytest(integration-documents-as-needed test_documents_as_needed.py TIMEOUT 300)
limen_add_pytest(integration-documents-mount test_documents_mount.py TIMEOUT 600)
limen_add_pytest(integration-documents-hardlinks test_documents_hardlinks.py TIMEOUT 300)
limen_add_pytest(integration-documents-reference test_documents_reference.py TIMEOUT 300)
limen_add_pytest(integration-documents-upstream-fuse test_documents_upstream_fuse.py TIMEOUT 900)
# The reference's installed tests against limen-portal and limen-documents together.
limen_add_pytest(integration-upstream-installed-tests test_upstream_installed_tests.py TIMEOUT 900)
limen_add_pytest(integration-documents-revoke test_documents_revoke.py TIMEOUT 300)
limen_add_pytest(integration-documents-host-changes test_documents_host_changes.py TIMEOUT 300)
limen_add_pytest(integration-documents-import test_documents_import.py TIMEOUT 300)
limen_add_pytest(integration-documents-import-faults test_documents_import_faults.py TIMEOUT 900)
limen_add_pytest(integration-documents-crash test_documents_crash.py TIMEOUT 600)

# Benchmark (label bench, not in the default run): against xdg-document-portal in the same run.
# Its lean client (sd-bus, which limen-documents needs anyway).
add_executable(store-client bench/store-client.c)
target_link_libraries(store-client PRIVATE PkgConfig::LIBSYSTEMD)
# The floor under an Add: a service that answers Add without any work (sd-bus, or GDBus).
add_executable(add-floor bench/add-floor.c)
target_link_libraries(add-floor PRIVATE PkgConfig::GLIB PkgConfig::LIBSYSTEMD)
add_test(NAME bench-documents COMMAND ${LIMEN_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/bench/bench-documents.py)
set_tests_properties(bench-documents PROPERTIES LABELS bench TIMEOUT 3600
  ENVIRONMENT "LIMEN_BUILD_DIR=${PROJECT_BINARY_DIR};PYTHONDONTWRITEBYTECODE=1")
limen_add_pytest(hostile-documents test_documents_hostile.py TIMEOUT 600)

# Fuzz target: the GVDB reader (the import parses files we did not write).
limen_add_fuzzer(fuzz-documents-gvdb fuzz-documents-gvdb.c 20000 LIBS limen-documents-lib)
limen_add_fuzzer(fuzz-documents-marshal fuzz-documents-marshal.c 100000 LIBS limen-documents-lib)
