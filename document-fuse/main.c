/* limen-documents — the document store, permission store and document filesystem.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <malloc.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>

#include "daemon.h"
#include "db.h"
#include "doc-model.h"
#include "doc-perm-table.h"
#include "doc-portal.h"
#include "docs-bus.h"
#include "file-transfer.h"
#include "fuse-ops.h"
#include "import.h"
#include "perm-store.h"

#define DOCUMENTS_BUS_NAME "org.freedesktop.portal.Documents"
/* What the import may take before the first answers: a few thousand entries. */
#define IMPORT_BUDGET_MS 150

typedef struct {
  LimenDb            *db;
  LimenPermStore     *perms;
  LimenDocModel      *model;
  LimenFuse          *fs;
  LimenDocPortal     *portal;
  LimenFileTransfer  *transfer;
  LimenDocsBus       *docs_bus;          /* the Documents name's connection */
  gboolean            documents_owned;   /* the Documents name is ours */
  gboolean            mount_wanted;      /* a Documents or FileTransfer call came */
  gboolean            fuse_started;
} Documents;

static Documents documents;

/* Nothing to serve files through: leave, so the session's service manager or D-Bus
 * activation starts a daemon that mounts again. */
static void
on_mount_lost (gpointer user_data)
{
  g_message ("Exiting: the document filesystem is gone");
  limen_daemon_quit (0);
}

static void
start_mount (Documents *d)
{
  g_autoptr(GError) error = NULL;

  if (d->fuse_started || !d->documents_owned || !d->mount_wanted)
    return;
  d->fuse_started = TRUE;
  if (!limen_fuse_start (d->fs, &error))
    g_warning ("No document filesystem: %s", error->message);
  limen_doc_portal_mount_settled (d->portal);
}

/* A call on Documents or FileTransfer; the first one mounts. Until then nothing is mounted,
 * so a daemon started for the permission store alone leaves $XDG_RUNTIME_DIR/doc a plain
 * directory, as the reference's separate permission store does (and costs no FUSE thread). */
static void
on_mount_wanted (gpointer user_data)
{
  Documents *d = user_data;

  d->mount_wanted = TRUE;
  start_mount (d);
}

/* The Documents name or its connection went away: another instance took over (--replace),
 * which unmounts ours and mounts its own, or the bus is gone. */
static void
on_documents_lost (gboolean bus_gone, gpointer user_data)
{
  limen_daemon_quit (0);
}

/* Mount only once we own the name: a second instance that loses the race must not
 * unmount the filesystem of the one that serves. */
static gboolean
own_documents (gboolean replace, gpointer user_data, GError **error)
{
  Documents *d = user_data;

  if (!limen_docs_bus_own_name (d->docs_bus, DOCUMENTS_BUS_NAME, replace, on_documents_lost, d, error))
    return FALSE;
  d->documents_owned = TRUE;
  start_mount (d);
  return TRUE;
}

static gboolean
load_stores (Documents *d, const char *db_path, GError **error)
{
  d->db = limen_db_open (db_path, error);
  if (d->db == NULL)
    return FALSE;
  d->perms = limen_perm_store_new (d->db, error);
  if (d->perms == NULL)
    return FALSE;
  d->model = limen_doc_model_new (d->db, error);
  if (d->model == NULL)
    {
      g_clear_pointer (&d->perms, limen_perm_store_free);
      return FALSE;
    }
  return TRUE;
}

static gboolean
on_bus (GDBusConnection *connection, gpointer user_data, GError **error)
{
  Documents *d = user_data;
  g_autofree char *dir = g_build_filename (g_get_user_data_dir (), "limen", NULL);
  g_autofree char *db_path = g_build_filename (dir, "documents.sqlite", NULL);
  g_autofree char *mountpoint = g_build_filename (g_get_user_runtime_dir (), "doc", NULL);

  if (g_mkdir_with_parents (dir, 0700) != 0)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno), "Cannot create %s: %s", dir,
                   g_strerror (errno));
      return FALSE;
    }
  if (!load_stores (d, db_path, error))
    {
      g_autoptr(GError) local_error = NULL;

      /* A file a clean exit left is not checked page by page before it is read (db.c): damage
       * found while loading it sends us through the check, and from there to its copy. */
      if (d->db == NULL || !limen_db_is_damaged (d->db))
        return FALSE;
      g_warning ("Opening the database again: %s", (*error)->message);
      g_clear_error (error);
      g_clear_pointer (&d->db, limen_db_close);
      if (!load_stores (d, db_path, error))
        return FALSE;
    }
  /* A big store's one-time import goes on from the main loop after this: the first calls
   * are answered at once. */
  limen_import_reference_state_start (d->db, d->perms, d->model, IMPORT_BUDGET_MS);
  limen_perm_store_set_documents (d->perms, limen_doc_perm_table (), d->model);

  d->fs = limen_fuse_new (d->model, mountpoint);
  limen_fuse_set_lost_func (d->fs, on_mount_lost, d);
  d->portal = limen_doc_portal_new (d->model, d->fs);
  limen_doc_portal_set_mount_func (d->portal, on_mount_wanted, d);
  /* A filesystem already there is a predecessor's (after --replace, a restart or a crash):
   * its users expect one there, so ours goes up as soon as the name is ours. */
  if (limen_fuse_mountpoint_in_use (d->fs))
    limen_doc_portal_want_mount (d->portal);
  else
    /* The mount point exists from the start, as the reference's does (clients and test
     * harnesses look for the folder); the filesystem goes up with the first call. */
    (void) g_mkdir_with_parents (limen_fuse_get_mountpoint (d->fs), 0700);
  d->transfer = limen_file_transfer_new (d->portal, d->fs);
  if (!limen_perm_store_export (d->perms, connection, error))
    return FALSE;
  /* Documents and FileTransfer on a connection of their own (docs-bus.c says why); it
   * serves once it owns the name (own_documents). */
  if (!(d->docs_bus = limen_docs_bus_new (connection, error)))
    return FALSE;
  limen_doc_portal_export (d->portal, d->docs_bus);
  limen_file_transfer_export (d->transfer, d->docs_bus);
  return TRUE;
}

static void
on_shutdown (gpointer user_data)
{
  Documents *d = user_data;

  /* Calls still waiting are answered, queued answers and signals sent, the name released. */
  g_clear_pointer (&d->docs_bus, limen_docs_bus_free);
  /* Unmount first: open files fail at once and no worker touches the model after. */
  if (d->fs && d->fuse_started)
    limen_fuse_stop (d->fs);
  if (d->db)
    {
      limen_db_close (d->db);
      d->db = NULL;
    }
}

int
main (int argc, char **argv)
{
  static const char *names[] = { "org.freedesktop.impl.portal.PermissionStore", NULL };
  LimenDaemonSpec spec = {
    .program = "limen-documents",
    .summary = N_("Document store, permission store and document filesystem for sandboxed applications"),
    .bus_names = names,
    .on_bus = on_bus,
    .on_shutdown = on_shutdown,
    .own_primary = own_documents,
    .user_data = &documents,
  };

  /* FUSE workers each get a malloc arena by default; two are plenty for their small,
   * short-lived allocations and keep the idle footprint down. */
  mallopt (M_ARENA_MAX, 2);
  return limen_daemon_main (&spec, argc, argv);
}
