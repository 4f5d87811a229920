/* limen-documents — the thread that tells the kernel what to forget.
 *
 * A kernel invalidation can wait on a request that is being served, and the D-Bus
 * thread must never wait on the FUSE channel: changes to the model only queue the
 * invalidations, and this thread sends them.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "fuse-private.h"

#include <errno.h>
#include <string.h>

typedef struct {
  fuse_ino_t parent;        /* inval_entry(parent, name) when name != NULL */
  char      *name;
  fuse_ino_t ino;           /* inval_inode(ino) otherwise */
  gboolean   expire;        /* only expire the entry (limen_fuse_queue_expire) */
  gboolean   stop;
} Inval;

/* Expire parent/name where the kernel can (Linux 6.2): the next walk through it asks us
 * again, and a fresh entry that answers with the same node keeps what is below it. An
 * invalidation instead drops whatever entry is there when it arrives: sent late (this
 * thread runs behind the request that queued it), it hits an entry the kernel has just
 * looked up again, and every file below it is forgotten and comes back with a new inode
 * number, even one held under another name (a hard link) a moment before. */
static void
send_entry (LimenFuse *fs, const Inval *inv)
{
  static gboolean no_expire;
  int res = -ENOSYS;

  if (inv->expire && !g_atomic_int_get (&no_expire))
    res = fuse_lowlevel_notify_expire_entry (fs->se, inv->parent, inv->name, strlen (inv->name),
                                             FUSE_LL_EXPIRE_ONLY);
  if (res == -ENOSYS || res == -EOPNOTSUPP)
    {
      if (inv->expire)
        g_atomic_int_set (&no_expire, TRUE);   /* an older kernel: as before 6.2 */
      fuse_lowlevel_notify_inval_entry (fs->se, inv->parent, inv->name, strlen (inv->name));
    }
}

static gpointer
inval_thread_func (gpointer user_data)
{
  LimenFuse *fs = user_data;

  for (;;)
    {
      Inval *inv = g_async_queue_pop (fs->inval_queue);
      gboolean stop = inv->stop;

      if (!stop && fs->se)
        {
          if (inv->name)
            send_entry (fs, inv);
          else
            fuse_lowlevel_notify_inval_inode (fs->se, inv->ino, 0, 0);
        }
      g_free (inv->name);
      g_free (inv);
      if (stop)
        return NULL;
    }
}

void
limen_fuse_queue_inval (LimenFuse *fs, fuse_ino_t parent, const char *name, fuse_ino_t ino)
{
  Inval *inv = g_new0 (Inval, 1);

  inv->parent = parent;
  inv->name = g_strdup (name);
  inv->ino = ino;
  g_async_queue_push (fs->inval_queue, inv);
}

void
limen_fuse_queue_expire (LimenFuse *fs, fuse_ino_t parent, const char *name)
{
  Inval *inv = g_new0 (Inval, 1);

  inv->parent = parent;
  inv->name = g_strdup (name);
  inv->expire = TRUE;
  g_async_queue_push (fs->inval_queue, inv);
}

/* The model changed (D-Bus thread): drop what the kernel caches about it, and temps
 * of views that lost write access. Never blocks: the work is queued. */
void
limen_fuse_on_doc_changed (LimenDoc *doc, const char *app, gpointer user_data)
{
  LimenFuse *fs = user_data;
  GPtrArray *nodes;
  const char *id = limen_doc_get_id (doc);
  g_autoptr(GPtrArray) dropped = g_ptr_array_new ();

  /* The kernel keeps the listings of by-app/ and by-app/APPID (see op_opendir): a grant,
   * revoke or delete changes them, also for a document that was never looked up. Counted
   * here, before the D-Bus reply, so every opendir after the reply lists afresh. */
  g_mutex_lock (&fs->lock);
  if (app == NULL)
    fs->all_gen++;
  else
    {
      g_autofree char *key = g_strdup_printf ("a:%s", app);
      Node *dir = g_hash_table_lookup (fs->by_key, key);

      if (dir)
        dir->list_gen++;
      fs->by_app->list_gen++;   /* the app may have gained its first or lost its last document */
    }
  g_mutex_unlock (&fs->lock);
  /* Never served: the kernel holds nothing else of it (failed lookups are not cached). */
  if (!limen_doc_was_seen (doc))
    return;
  g_mutex_lock (&fs->lock);
  if (app == NULL)
    limen_fuse_queue_inval (fs, FUSE_ROOT_ID, id, 0);
  for (guint i = 0; i < fs->app_dirs->len; i++)
    {
      Node *dir = fs->app_dirs->pdata[i];

      if (app == NULL || g_strcmp0 (dir->app, app) == 0)
        limen_fuse_queue_inval (fs, dir->ino, id, 0);
    }
  nodes = limen_fuse_doc_nodes_locked (fs, doc);
  for (guint i = 0; nodes && i < nodes->len; i++)
    {
      Node *node = nodes->pdata[i];

      if (node->doc != doc || (app != NULL && g_strcmp0 (node->app, app) != 0))
        continue;
      limen_fuse_queue_inval (fs, 0, NULL, node->ino);
      if (node->temps && !(limen_doc_get_perms (doc, node->app) & LIMEN_DOC_PERM_WRITE))
        g_ptr_array_add (dropped, node);
    }
  for (guint i = 0; i < dropped->len; i++)
    {
      Node *dir = dropped->pdata[i];
      GHashTableIter titer;
      gpointer t;

      g_hash_table_iter_init (&titer, dir->temps);
      while (g_hash_table_iter_next (&titer, NULL, &t))
        {
          limen_fuse_queue_inval (fs, dir->ino, ((Node *) t)->temp_name, 0);
          g_hash_table_iter_steal (&titer);
          limen_fuse_node_unref_locked (fs, t);
        }
    }
  g_mutex_unlock (&fs->lock);
}


void
limen_fuse_inval_start (LimenFuse *fs)
{
  fs->inval_thread = g_thread_new ("limen-inval", inval_thread_func, fs);
}

void
limen_fuse_inval_stop (LimenFuse *fs)
{
  Inval *stop = g_new0 (Inval, 1);

  stop->stop = TRUE;
  g_async_queue_push (fs->inval_queue, stop);
}
