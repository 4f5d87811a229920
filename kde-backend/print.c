/* Limen — org.freedesktop.impl.portal.Print: PreparePrint shows the print dialog and
 * hands back GTK-style settings, a page setup and a token; Print streams the app's PDF
 * to CUPS (libcups, on a worker thread) with the settings the token stands for, or
 * asks first when there is none.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "driver.h"

#include "option-tables.h"

#include <cups/cups.h>
#include <gio/gunixinputstream.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errors.h"

#define MAX_TOKENS 64
#define TITLE_ARG 3
#define PREPARE_SETTINGS_ARG 4
#define PREPARE_PAGE_SETUP_ARG 5
#define PRINT_FD_ARG 4

/* GTK's name for printing to a file. */
#define FILE_PRINTER "Print to File"

static const char *const orientations[] = { "portrait", "landscape", "reverse_landscape", "reverse_portrait" };
static const char *const duplexes[] = { "simplex", "vertical", "horizontal" };

/* Settings given by a token, kept until Print uses them. */
typedef struct {
  char     *app_id;
  GVariant *settings;     /* a{sv}, GTK keys */
  GVariant *page_setup;
} PrintToken;

static GHashTable *tokens;   /* GUINT_TO_POINTER (token) → PrintToken */

static void
print_token_free (PrintToken *t)
{
  g_free (t->app_id);
  g_variant_unref (t->settings);
  g_variant_unref (t->page_setup);
  g_free (t);
}

/* What a Print or PreparePrint call keeps beside the driver's call. */
typedef struct {
  int       fd;           /* Print: the document, until the job takes it */
  guint32   token;        /* Print: the PreparePrint token it came with, 0: none */
  GVariant *settings;     /* PreparePrint: the checked settings and page setup */
  GVariant *page_setup;
} PrintData;

static void
print_data_free (PrintData *data)
{
  if (data->fd >= 0)
    close (data->fd);
  g_clear_pointer (&data->settings, g_variant_unref);
  g_clear_pointer (&data->page_setup, g_variant_unref);
  g_free (data);
}

static PrintData *
print_data_new (LimenKdeCall *call)
{
  PrintData *data = g_new0 (PrintData, 1);

  data->fd = -1;
  limen_kde_call_set_data (call, data, (GDestroyNotify) print_data_free);
  return data;
}

static int
index_of (const char *value, const char *const *names, int n)
{
  for (int i = 0; value && i < n; i++)
    if (g_str_equal (value, names[i]))
      return i;
  return -1;
}

static int
yes_no (GVariant *dict, const char *key)
{
  const char *v = NULL;

  if (!g_variant_lookup (dict, key, "&s", &v))
    return -1;
  return g_str_equal (v, "yes") || g_str_equal (v, "true") ? 1 : 0;
}

/* GTK-style dicts → the shim's settings. Strings point into the dicts. */
static void
settings_from_dicts (GVariant *settings, GVariant *page_setup, LimenQtPrintSettings *out, char **file_out)
{
  const char *s = NULL;

  memset (out, 0, sizeof *out);
  out->copies = out->collate = out->duplex = out->orientation = out->color = out->reverse = -1;
  g_variant_lookup (settings, "printer", "&s", &out->printer);
  /* Printing to a file: a local PDF, nothing else (Qt's dialog writes no other format). */
  *file_out = NULL;
  {
    const char *uri = NULL, *format = "pdf";

    g_variant_lookup (settings, "output-file-format", "&s", &format);
    if (g_variant_lookup (settings, "output-uri", "&s", &uri) && g_str_equal (format, "pdf"))
      *file_out = g_filename_from_uri (uri, NULL, NULL);
    if (*file_out)
      {
        out->output_file = *file_out;
        out->printer = NULL;
      }
  }
  if (g_variant_lookup (settings, "n-copies", "&s", &s))
    out->copies = CLAMP ((int) g_ascii_strtoll (s, NULL, 10), 1, 999);
  out->collate = yes_no (settings, "collate");
  out->color = yes_no (settings, "use-color");
  out->reverse = yes_no (settings, "reverse");
  if (g_variant_lookup (settings, "duplex", "&s", &s))
    out->duplex = index_of (s, duplexes, G_N_ELEMENTS (duplexes));
  if (g_variant_lookup (settings, "orientation", "&s", &s) ||
      g_variant_lookup (page_setup, "Orientation", "&s", &s))
    out->orientation = index_of (s, orientations, G_N_ELEMENTS (orientations));
  if (g_variant_lookup (settings, "print-pages", "&s", &s) && !g_str_equal (s, "ranges"))
    out->page_set = g_str_equal (s, "current") ? 1 : g_str_equal (s, "selection") ? 2 : 0;
  else if (s && g_str_equal (s, "ranges") && g_variant_lookup (settings, "page-ranges", "&s", &s))
    {
      /* One range ("3" or "2-5"): what the dialog can show. */
      char *end = NULL;
      gint64 from = g_ascii_strtoll (s, &end, 10), to = from;

      if (end && *end == '-')
        to = g_ascii_strtoll (end + 1, &end, 10);
      if (from >= 1 && to >= from && to <= 99999 && end && (*end == '\0' || *end == ','))
        {
          out->from_page = (int) from;
          out->to_page = (int) to;
        }
    }
  if (!g_variant_lookup (page_setup, "PPDName", "&s", &out->paper_name))
    g_variant_lookup (settings, "paper-format", "&s", &out->paper_name);
  g_variant_lookup (page_setup, "DisplayName", "&s", &out->paper_display);
  g_variant_lookup (page_setup, "Width", "d", &out->paper_width_mm);
  g_variant_lookup (page_setup, "Height", "d", &out->paper_height_mm);
  if (out->paper_width_mm <= 0 || out->paper_width_mm > 10000 || out->paper_height_mm <= 0 ||
      out->paper_height_mm > 10000)
    out->paper_width_mm = out->paper_height_mm = 0;
}

static char *
mm (double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];

  return g_strdup (g_ascii_dtostr (buf, sizeof buf, v));
}

/* The shim's settings → GTK-style settings and page setup dicts. */
static void
settings_to_dicts (const LimenQtPrintSettings *in, GVariant **settings, GVariant **page_setup)
{
  GVariantBuilder s, p;
  g_autofree char *copies = g_strdup_printf ("%d", in->copies);
  g_autofree char *w = mm (in->paper_width_mm), *h = mm (in->paper_height_mm);
  const char *orientation = orientations[CLAMP (in->orientation, 0, 3)];

  g_variant_builder_init (&s, G_VARIANT_TYPE_VARDICT);
  if (in->output_file)
    {
      g_autofree char *uri = g_filename_to_uri (in->output_file, NULL, NULL);

      g_variant_builder_add (&s, "{sv}", "printer", g_variant_new_string (FILE_PRINTER));
      if (uri)
        g_variant_builder_add (&s, "{sv}", "output-uri", g_variant_new_string (uri));
      g_variant_builder_add (&s, "{sv}", "output-file-format", g_variant_new_string ("pdf"));
    }
  else if (in->printer && *in->printer)
    g_variant_builder_add (&s, "{sv}", "printer", g_variant_new_string (in->printer));
  g_variant_builder_add (&s, "{sv}", "n-copies", g_variant_new_string (copies));
  g_variant_builder_add (&s, "{sv}", "collate", g_variant_new_string (in->collate > 0 ? "yes" : "no"));
  g_variant_builder_add (&s, "{sv}", "duplex", g_variant_new_string (duplexes[CLAMP (in->duplex, 0, 2)]));
  g_variant_builder_add (&s, "{sv}", "orientation", g_variant_new_string (orientation));
  g_variant_builder_add (&s, "{sv}", "use-color", g_variant_new_string (in->color > 0 ? "yes" : "no"));
  g_variant_builder_add (&s, "{sv}", "reverse", g_variant_new_string (in->reverse > 0 ? "yes" : "no"));
  if (in->page_set == 1 || in->page_set == 2)
    /* The app renders only that page or selection into what it prints. */
    g_variant_builder_add (&s, "{sv}", "print-pages", g_variant_new_string (in->page_set == 1 ? "current" : "selection"));
  else if (in->from_page > 0)
    {
      g_autofree char *range = g_strdup_printf ("%d-%d", in->from_page, in->to_page);

      g_variant_builder_add (&s, "{sv}", "print-pages", g_variant_new_string ("ranges"));
      g_variant_builder_add (&s, "{sv}", "page-ranges", g_variant_new_string (range));
    }
  else
    g_variant_builder_add (&s, "{sv}", "print-pages", g_variant_new_string ("all"));
  if (in->paper_name && *in->paper_name)
    g_variant_builder_add (&s, "{sv}", "paper-format", g_variant_new_string (in->paper_name));
  if (in->paper_width_mm > 0)
    {
      g_variant_builder_add (&s, "{sv}", "paper-width", g_variant_new_string (w));
      g_variant_builder_add (&s, "{sv}", "paper-height", g_variant_new_string (h));
    }

  g_variant_builder_init (&p, G_VARIANT_TYPE_VARDICT);
  if (in->paper_name && *in->paper_name)
    {
      g_variant_builder_add (&p, "{sv}", "PPDName", g_variant_new_string (in->paper_name));
      g_variant_builder_add (&p, "{sv}", "Name", g_variant_new_string (in->paper_name));
    }
  g_variant_builder_add (&p, "{sv}", "DisplayName",
                         g_variant_new_string (in->paper_display ? in->paper_display : ""));
  g_variant_builder_add (&p, "{sv}", "Width", g_variant_new_double (in->paper_width_mm));
  g_variant_builder_add (&p, "{sv}", "Height", g_variant_new_double (in->paper_height_mm));
  g_variant_builder_add (&p, "{sv}", "MarginTop", g_variant_new_double (in->margin_top_mm));
  g_variant_builder_add (&p, "{sv}", "MarginBottom", g_variant_new_double (in->margin_bottom_mm));
  g_variant_builder_add (&p, "{sv}", "MarginLeft", g_variant_new_double (in->margin_left_mm));
  g_variant_builder_add (&p, "{sv}", "MarginRight", g_variant_new_double (in->margin_right_mm));
  g_variant_builder_add (&p, "{sv}", "Orientation", g_variant_new_string (orientation));
  *settings = g_variant_ref_sink (g_variant_builder_end (&s));
  *page_setup = g_variant_ref_sink (g_variant_builder_end (&p));
}

/* ---- CUPS ---- */

typedef struct {
  char          *printer;
  char          *output_file;   /* set: write the document here, not to CUPS */
  char          *title;
  int            fd;
  int            num_options;
  cups_option_t *options;
} CupsJob;

static void
cups_job_free (CupsJob *job)
{
  g_free (job->printer);
  g_free (job->output_file);
  g_free (job->title);
  if (job->fd >= 0)
    close (job->fd);
  cupsFreeOptions (job->num_options, job->options);
  g_free (job);
}

/* IPP job attributes for the chosen settings. */
static void
cups_job_set_options (CupsJob *job, const LimenQtPrintSettings *s)
{
  static const char *const orientation_ipp[] = { "3", "4", "5", "6" };
  static const char *const sides[] = { "one-sided", "two-sided-long-edge", "two-sided-short-edge" };

  if (s->copies > 1)
    {
      g_autofree char *copies = g_strdup_printf ("%d", s->copies);

      job->num_options = cupsAddOption ("copies", copies, job->num_options, &job->options);
    }
  if (s->collate >= 0)
    job->num_options = cupsAddOption ("multiple-document-handling",
                                      s->collate ? "separate-documents-collated-copies"
                                                 : "separate-documents-uncollated-copies",
                                      job->num_options, &job->options);
  if (s->duplex >= 0)
    job->num_options = cupsAddOption ("sides", sides[CLAMP (s->duplex, 0, 2)], job->num_options, &job->options);
  if (s->orientation >= 0)
    job->num_options = cupsAddOption ("orientation-requested", orientation_ipp[CLAMP (s->orientation, 0, 3)],
                                      job->num_options, &job->options);
  if (s->from_page > 0)
    {
      g_autofree char *range = g_strdup_printf ("%d-%d", s->from_page, s->to_page);

      job->num_options = cupsAddOption ("page-ranges", range, job->num_options, &job->options);
    }
  if (s->reverse > 0)
    job->num_options = cupsAddOption ("outputorder", "reverse", job->num_options, &job->options);
  if (s->color == 0)
    job->num_options = cupsAddOption ("print-color-mode", "monochrome", job->num_options, &job->options);
  if (s->paper_name && *s->paper_name)
    job->num_options = cupsAddOption ("media", s->paper_name, job->num_options, &job->options);
}

/* Printing to a file: the app's PDF as it is, into the file the person chose. */
static void
write_file_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  CupsJob *job = task_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(GFile) file = g_file_new_for_path (job->output_file);
  g_autoptr(GFileOutputStream) out = g_file_replace (file, NULL, FALSE, G_FILE_CREATE_NONE, NULL, &error);
  g_autoptr(GInputStream) in = NULL;

  if (out && lseek (job->fd, 0, SEEK_SET) < 0 && errno != ESPIPE)
    g_set_error (&error, LIMEN_ERROR, LIMEN_ERROR_FAILED, "Cannot rewind the document");
  if (out && !error)
    {
      in = g_unix_input_stream_new (job->fd, FALSE);
      if (g_output_stream_splice (G_OUTPUT_STREAM (out), in, G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET, NULL, &error) < 0)
        g_prefix_error (&error, "Writing %s: ", job->output_file);
    }
  if (error)
    {
      g_task_return_error (task, g_steal_pointer (&error));
      return;
    }
  g_debug ("Printed %s to %s", job->title, job->output_file);
  g_task_return_int (task, 1);
}

static void
submit_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  CupsJob *job = task_data;
  int job_id;
  char buf[65536];
  ssize_t n;
  http_status_t status = HTTP_STATUS_CONTINUE;

  if (!job->printer)
    {
      const char *def = cupsGetDefault ();

      if (!def)
        {
          g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_FAILED, "No printer chosen and CUPS has no default");
          return;
        }
      job->printer = g_strdup (def);
    }
  /* The fd may have been read before (offset): CUPS needs the whole document. */
  if (lseek (job->fd, 0, SEEK_SET) < 0 && errno != ESPIPE)
    {
      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_FAILED, "Cannot rewind the document");
      return;
    }
  job_id = cupsCreateJob (CUPS_HTTP_DEFAULT, job->printer, job->title, job->num_options, job->options);
  if (job_id == 0)
    {
      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_FAILED, "CUPS refused the job: %s",
                               cupsLastErrorString ());
      return;
    }
  if (cupsStartDocument (CUPS_HTTP_DEFAULT, job->printer, job_id, job->title, CUPS_FORMAT_PDF, 1) !=
      HTTP_STATUS_CONTINUE)
    {
      cupsCancelJob2 (CUPS_HTTP_DEFAULT, job->printer, job_id, 0);
      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_FAILED, "CUPS: %s", cupsLastErrorString ());
      return;
    }
  while ((n = read (job->fd, buf, sizeof buf)) != 0)
    {
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 || (status = cupsWriteRequestData (CUPS_HTTP_DEFAULT, buf, (size_t) n)) != HTTP_STATUS_CONTINUE)
        break;
    }
  if (n != 0)
    {
      cupsFinishDocument (CUPS_HTTP_DEFAULT, job->printer);
      cupsCancelJob2 (CUPS_HTTP_DEFAULT, job->printer, job_id, 0);
      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_FAILED, "Sending the document to CUPS failed: %s",
                               n < 0 ? g_strerror (errno) : cupsLastErrorString ());
      return;
    }
  if (cupsFinishDocument (CUPS_HTTP_DEFAULT, job->printer) != IPP_STATUS_OK)
    {
      g_task_return_new_error (task, LIMEN_ERROR, LIMEN_ERROR_FAILED, "CUPS: %s", cupsLastErrorString ());
      return;
    }
  g_debug ("CUPS job %d on %s: %s", job_id, job->printer, job->title);
  g_task_return_int (task, job_id);
}

static void
on_submitted (GObject *source, GAsyncResult *result, gpointer user_data)
{
  g_autoptr(GError) error = NULL;
  gssize job_id = g_task_propagate_int (G_TASK (result), &error);

  if (job_id <= 0)
    g_warning ("Printing failed: %s", error->message);
  /* Closed meanwhile: the job is with CUPS already, and the caller has had its 2. */
  limen_kde_call_finish (user_data, job_id > 0 ? 0 : 2, NULL);
}

static void
submit (LimenKdeCall *call, const LimenQtPrintSettings *settings)
{
  PrintData *data = limen_kde_call_get_data (call);
  const char *title = limen_kde_call_get_string (call, TITLE_ARG);
  CupsJob *job = g_new0 (CupsJob, 1);
  g_autoptr(GTask) task = g_task_new (NULL, NULL, on_submitted, call);
  /* NULL: CUPS's default, asked on the worker (an IPP round trip). */
  job->printer = settings->printer && *settings->printer ? g_strdup (settings->printer) : NULL;
  job->output_file = g_strdup (settings->output_file);
  job->title = g_strdup (*title ? title : "Document");
  job->fd = data->fd;
  data->fd = -1;
  cups_job_set_options (job, settings);
  g_task_set_task_data (task, job, (GDestroyNotify) cups_job_free);
  g_task_run_in_thread (task, job->output_file ? write_file_thread : submit_thread);
}

/* ---- D-Bus ---- */

static guint32
store_token (const char *app_id, GVariant *settings, GVariant *page_setup)
{
  PrintToken *t = g_new0 (PrintToken, 1);
  guint32 token;

  if (!tokens)
    tokens = g_hash_table_new_full (NULL, NULL, NULL, (GDestroyNotify) print_token_free);
  /* Bounded: an app preparing without ever printing must not grow us. */
  if (g_hash_table_size (tokens) >= MAX_TOKENS)
    g_hash_table_remove_all (tokens);
  do
    token = g_random_int ();
  while (token == 0 || g_hash_table_contains (tokens, GUINT_TO_POINTER (token)));
  t->app_id = g_strdup (app_id);
  t->settings = g_variant_ref (settings);
  t->page_setup = g_variant_ref (page_setup);
  g_hash_table_insert (tokens, GUINT_TO_POINTER (token), t);
  return token;
}

static void
on_prepare_done (LimenQtDialog *dialog, int response, const LimenQtPrintSettings *chosen, void *user_data)
{
  GVariantBuilder results;
  g_autoptr(GVariant) settings = NULL;
  g_autoptr(GVariant) page_setup = NULL;

  g_variant_builder_init (&results, G_VARIANT_TYPE_VARDICT);
  if (response == LIMEN_QT_RESPONSE_OK && chosen)
    {
      settings_to_dicts (chosen, &settings, &page_setup);
      g_variant_builder_add (&results, "{sv}", "settings", settings);
      g_variant_builder_add (&results, "{sv}", "page-setup", page_setup);
      g_variant_builder_add (&results, "{sv}", "token",
                             g_variant_new_uint32 (store_token (limen_kde_call_get_app_id (user_data), settings,
                                                                page_setup)));
    }
  limen_kde_call_finish (user_data, response, g_variant_builder_end (&results));
}

static void
on_print_dialog_done (LimenQtDialog *dialog, int response, const LimenQtPrintSettings *chosen, void *user_data)
{
  if (response != LIMEN_QT_RESPONSE_OK || !chosen)
    {
      limen_kde_call_finish (user_data, response, NULL);
      return;
    }
  limen_kde_call_dialog_closed (user_data);
  submit (user_data, chosen);
}

static gboolean
filter_dict (GVariant *dict, const char *name, const LimenOption *table, GVariant **out, GError **error)
{
  g_auto(GVariantBuilder) b = G_VARIANT_BUILDER_INIT (G_VARIANT_TYPE_VARDICT);

  if (!limen_options_filter (dict, &b, error, table, NULL))
    {
      g_prefix_error (error, "%s: ", name);
      return FALSE;
    }
  *out = g_variant_ref_sink (g_variant_builder_end (&b));
  return TRUE;
}

static gboolean
check_title (LimenKdeCall *call, GError **error)
{
  return limen_kde_check_string_arg ("title", limen_kde_call_get_string (call, TITLE_ARG), 1024, error);
}

static gboolean
open_dialog (LimenKdeCall *call, const LimenKdeShim *shim, GCallback done, const LimenQtPrintSettings *initial,
             gboolean print_now)
{
  GVariant *opts = limen_kde_call_get_options (call);
  LimenQtPrintSpec spec = { 0 };
  gboolean current = FALSE, selection = FALSE;

  g_variant_lookup (opts, "has_current_page", "b", &current);
  g_variant_lookup (opts, "has_selected_pages", "b", &selection);
  spec.has_current_page = current;
  spec.has_selected_pages = selection;
  /* To a file only as PDF, and only when the app can write PDF (all formats if it did not
   * say); Print without PreparePrint keeps to printers. */
  if (!print_now)
    {
      g_autofree const char **formats = NULL;

      spec.print_to_file = !g_variant_lookup (opts, "supported_output_file_formats", "^a&s", &formats) ||
                           g_strv_contains (formats, "pdf");
      g_variant_lookup (opts, "accept_label", "&s", &spec.accept_label);
    }
  limen_kde_call_window (call, &spec.window);
  spec.title = limen_kde_call_get_string (call, TITLE_ARG);
  spec.print_now = print_now;
  spec.initial = *initial;
  return limen_kde_call_opened (call, shim->limen_qt_print_open (&spec, (LimenQtPrintDone) done, call));
}

/* PreparePrint: the title, the settings and page setup (GTK's keys), the Kiosk lock. */
static gboolean
check_prepare (LimenKdeCall *call, GError **error)
{
  g_autoptr(GVariant) settings_in = limen_kde_call_get_arg (call, PREPARE_SETTINGS_ARG);
  g_autoptr(GVariant) page_setup_in = limen_kde_call_get_arg (call, PREPARE_PAGE_SETUP_ARG);
  PrintData *data = print_data_new (call);

  return check_title (call, error) &&
         filter_dict (settings_in, "settings", limen_options_impl_print_settings, &data->settings, error) &&
         filter_dict (page_setup_in, "page_setup", limen_options_impl_print_page_setup, &data->page_setup, error) &&
         limen_kde_lockdown_check_printing (error);
}

static gboolean
open_prepare (LimenKdeCall *call, const LimenKdeShim *shim, GCallback done)
{
  PrintData *data = limen_kde_call_get_data (call);
  LimenQtPrintSettings initial;
  g_autofree char *file = NULL;

  settings_from_dicts (data->settings, data->page_setup, &initial, &file);
  return open_dialog (call, shim, done, &initial, FALSE);
}

/* The document: a readable regular file the frontend passed. */
static gboolean
take_document (LimenKdeCall *call, PrintData *data, GError **error)
{
  g_autoptr(GVariant) fd_v = limen_kde_call_get_arg (call, PRINT_FD_ARG);
  GUnixFDList *fd_list = limen_kde_call_get_fd_list (call);
  gint32 index = g_variant_get_handle (fd_v);
  struct stat st;

  if (!fd_list || index < 0 || index >= g_unix_fd_list_get_length (fd_list))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid fd: index out of range");
      return FALSE;
    }
  data->fd = g_unix_fd_list_get (fd_list, index, NULL);
  if (data->fd < 0 || fstat (data->fd, &st) < 0 || !S_ISREG (st.st_mode) ||
      (fcntl (data->fd, F_GETFL) & O_ACCMODE) == O_WRONLY || (fcntl (data->fd, F_GETFL) & O_PATH))
    {
      g_set_error_literal (error, LIMEN_ERROR, LIMEN_ERROR_INVALID_ARGUMENT, "Invalid fd: not a readable regular file");
      return FALSE;
    }
  return TRUE;
}

/* Print: the title, the Kiosk lock, the document, and the app's own token (without one the
 * dialog asks first, so the shim must be able to show it). */
static gboolean
check_print (LimenKdeCall *call, GError **error)
{
  PrintData *data = print_data_new (call);
  guint32 token = 0;
  PrintToken *t = NULL;

  if (!check_title (call, error) || !limen_kde_lockdown_check_printing (error) ||
      !take_document (call, data, error))
    return FALSE;
  g_variant_lookup (limen_kde_call_get_options (call), "token", "u", &token);
  if (token && tokens)
    t = g_hash_table_lookup (tokens, GUINT_TO_POINTER (token));
  /* A token is the app's own: another app cannot print with it. */
  if (t && g_strcmp0 (t->app_id, limen_kde_call_get_app_id (call)) == 0)
    {
      data->token = token;
      return TRUE;
    }
  return limen_kde_shim_get_for_dialog (error) != NULL;
}

static gboolean
open_print (LimenKdeCall *call, const LimenKdeShim *shim, GCallback done)
{
  PrintData *data = limen_kde_call_get_data (call);
  LimenQtPrintSettings settings;
  g_autofree char *file = NULL;

  if (data->token)
    {
      PrintToken *t = g_hash_table_lookup (tokens, GUINT_TO_POINTER (data->token));

      g_hash_table_steal (tokens, GUINT_TO_POINTER (data->token));
      settings_from_dicts (t->settings, t->page_setup, &settings, &file);
      submit (call, &settings);
      print_token_free (t);
      return TRUE;
    }
  else
    {
      g_autoptr(GVariant) empty = g_variant_ref_sink (g_variant_new_array (G_VARIANT_TYPE ("{sv}"), NULL, 0));

      settings_from_dicts (empty, empty, &settings, &file);
      return open_dialog (call, limen_kde_shim_get_for_dialog (NULL), done, &settings, TRUE);
    }
}

#define PRINT_FAILED "The print dialog could not be shown"

static const LimenKdeMethod print_methods[] = {
  { .method = "PreparePrint", .options = limen_options_print_prepare_print, .check = check_prepare,
    .open = open_prepare, .done = G_CALLBACK (on_prepare_done), .failed = PRINT_FAILED },
  /* With a token, no dialog and no shim: the job goes to CUPS at once. */
  { .method = "Print", .options = limen_options_print_print, .check = check_print, .open = open_print,
    .done = G_CALLBACK (on_print_dialog_done), .failed = PRINT_FAILED, .flags = LIMEN_KDE_METHOD_OWN_SHIM },
  { NULL }
};

GDBusInterfaceSkeleton *
limen_kde_print_new (void)
{
  return limen_kde_driver_offer (limen_dbus_impl_portal_print_skeleton_new (), print_methods);
}
