/* limen_lazy_open/limen_lazy_load: the loader of the libraries opened on first use.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>
#include <unistd.h>

#include "lazy-library.h"

#define MISSING_SONAME "liblimen-test-no-such-library.so.7"
#define MISSING_SYMBOL "limen_test_no_such_symbol"

/* As a lazy file keeps it: typed function pointers, in the order of the names. */
typedef struct {
  pid_t  (*get_pid) (void);
  size_t (*str_len) (const char *s);
  int    (*absolute) (int j);
} LibcTable;

static const char *const libc_symbols[] = { "getpid", "strlen", "abs" };
G_STATIC_ASSERT (sizeof (LibcTable) == G_N_ELEMENTS (libc_symbols) * sizeof (LimenLazySlot));

static gboolean
table_is_empty (const LibcTable *table)
{
  return table->get_pid == NULL && table->str_len == NULL && table->absolute == NULL;
}

static void
test_success_fills_every_slot (void)
{
  g_autoptr(GError) error = NULL;
  LibcTable table = { NULL };

  g_assert_true (limen_lazy_open ("libc.so.6", libc_symbols, G_N_ELEMENTS (libc_symbols), &table, &error));
  g_assert_no_error (error);
  g_assert_nonnull (table.get_pid);
  g_assert_nonnull (table.str_len);
  g_assert_nonnull (table.absolute);
  /* Each slot holds the function of its own name, not a neighbour's. */
  g_assert_cmpint (table.get_pid (), ==, getpid ());
  g_assert_cmpuint (table.str_len ("limen"), ==, 5);
  g_assert_cmpint (table.absolute (-7), ==, 7);
}

static void
test_missing_library (void)
{
  g_autoptr(GError) error = NULL;
  LibcTable table = { NULL };

  g_assert_false (limen_lazy_open (MISSING_SONAME, libc_symbols, G_N_ELEMENTS (libc_symbols), &table, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_assert_nonnull (strstr (error->message, MISSING_SONAME));
  g_assert_true (table_is_empty (&table));
}

static void
test_missing_symbol (void)
{
  /* The made-up name last: the slots filled before it must be cleared again. */
  const char *const symbols[] = { "getpid", "strlen", MISSING_SYMBOL };
  g_autoptr(GError) error = NULL;
  LibcTable table = { NULL };

  g_assert_false (limen_lazy_open ("libc.so.6", symbols, G_N_ELEMENTS (symbols), &table, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
  g_assert_cmpstr (error->message, ==, "libc.so.6 lacks " MISSING_SYMBOL);
  g_assert_true (table_is_empty (&table));
}

static void
test_load_logs_once (void)
{
  static LibcTable table;
  static LimenLazyLibrary library = {
    .soname = MISSING_SONAME, .symbols = libc_symbols, .n_symbols = G_N_ELEMENTS (libc_symbols),
    .slots = &table, .failure = "Test library is not available",
  };

  g_test_expect_message (NULL, G_LOG_LEVEL_WARNING, "Test library is not available: *" MISSING_SONAME "*");
  g_assert_false (limen_lazy_load (&library));
  g_test_assert_expected_messages ();
  g_assert_true (g_str_has_prefix (library.error, "Test library is not available: "));
  /* Answered from memory: no second dlopen, no second warning (it would be fatal here). */
  g_assert_false (limen_lazy_load (&library));
  g_assert_true (table_is_empty (&table));
}

static LibcTable shared_table;
static LimenLazyLibrary shared_library = {
  .soname = "libc.so.6", .symbols = libc_symbols, .n_symbols = G_N_ELEMENTS (libc_symbols),
  .slots = &shared_table, .failure = "libc is not available",
};

static gpointer
load_and_call (gpointer user_data)
{
  if (!limen_lazy_load (&shared_library))
    return GINT_TO_POINTER (-1);
  /* The slots must be complete for whichever thread sees "loaded". */
  return GINT_TO_POINTER ((int) shared_table.str_len ("four") + shared_table.absolute (-1));
}

static void
test_load_from_many_threads (void)
{
  GThread *threads[8];

  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    threads[i] = g_thread_new ("loader", load_and_call, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    g_assert_cmpint (GPOINTER_TO_INT (g_thread_join (threads[i])), ==, 5);
  g_assert_null (shared_library.error);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/lazy/open/success", test_success_fills_every_slot);
  g_test_add_func ("/lazy/open/missing-library", test_missing_library);
  g_test_add_func ("/lazy/open/missing-symbol", test_missing_symbol);
  g_test_add_func ("/lazy/load/logs-once", test_load_logs_once);
  g_test_add_func ("/lazy/load/threads", test_load_from_many_threads);
  return g_test_run ();
}
