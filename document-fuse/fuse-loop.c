/* limen-documents — the FUSE request loop.
 *
 * One thread at a time reads requests: the reader. A request that only looks at the
 * filesystem's own nodes (a lookup in the root, by-app/ or an app's folder, the attributes
 * or xattrs of those and of a document's folder, a forget, a releasedir) is answered by the
 * reader itself, which then reads the next one. Anything else (whatever reaches a host
 * file, and the listings, which may be long) is handed on: another thread becomes the
 * reader first, so a request that waits on a slow disk never holds up the others.
 *
 * Why not libfuse's loop: its idle threads all wait in read(), and the kernel hands each
 * request to the one that has waited longest, so a program that asks one thing after
 * another (`ls -l` of a folder: seven requests per entry, one at a time) meets a different
 * thread each time. The scheduler then stops placing the woken thread beside the program
 * that woke it, and on this kind of machine (2 virtual CPUs) every request paid a wake-up
 * across CPUs: `ls -l` of 2,000 documents took 0.9 s with it and 0.15 s with one thread
 * answering (medians of 7 rounds on a loaded 2-CPU machine).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "fuse-private.h"

#include <errno.h>
#include <stdlib.h>

#define MAX_WORKERS 16

/* The kernel's request header (<linux/fuse.h>, the FUSE ABI): only what we read of it. */
typedef struct {
  guint32 len;
  guint32 opcode;
  guint64 unique;
  guint64 nodeid;
  guint32 uid, gid, pid;
  guint32 padding;
} InHeader;

enum {
  OP_LOOKUP = 1,
  OP_FORGET = 2,
  OP_GETATTR = 3,
  OP_GETXATTR = 22,
  OP_LISTXATTR = 23,
  OP_RELEASEDIR = 29,
  OP_ACCESS = 34,
  OP_BATCH_FORGET = 42,
};

typedef struct {
  LimenFuse *fs;
  GMutex     lock;
  GCond      cond;          /* the reader's place came free, or the loop ends */
  gboolean   reader_free;
  gboolean   done;
  int        waiting;       /* threads waiting for the reader's place */
  int        error;         /* the first receive error (negative errno), as libfuse reports it */
  GPtrArray *threads;       /* the workers started, joined at the end */
} Loop;

/* May the reader answer @buf itself: nothing in it reaches a host file or lists a folder? */
static gboolean
request_is_quick (LimenFuse *fs, const struct fuse_buf *buf)
{
  const InHeader *in = buf->mem;
  Node *node;
  NodeKind kind;

  if ((buf->flags & FUSE_BUF_IS_FD) || buf->size < sizeof *in)
    return FALSE;
  switch (in->opcode)
    {
    case OP_FORGET:
    case OP_BATCH_FORGET:
    case OP_RELEASEDIR:
      return TRUE;
    case OP_LOOKUP:
    case OP_GETATTR:
    case OP_GETXATTR:
    case OP_LISTXATTR:
    case OP_ACCESS:
      break;
    default:
      return FALSE;
    }
  g_mutex_lock (&fs->lock);
  node = g_hash_table_lookup (fs->inodes, GSIZE_TO_POINTER (in->nodeid));
  kind = node ? node->kind : NODE_FILE;
  g_mutex_unlock (&fs->lock);
  if (node == NULL)
    return TRUE;      /* answered ESTALE */
  /* Where the caller is checked, only a caller known already: identifying a new one reads
   * its /proc entry, and a Snap's asks snapd. */
  if ((in->opcode == OP_ACCESS || (in->opcode == OP_LOOKUP && (kind == NODE_ROOT || kind == NODE_BY_APP))) &&
      !limen_fuse_caller_known (fs, (pid_t) in->pid))
    return FALSE;
  /* A lookup of a document's folder may wait for the one-time import (fuse-ops.c): never
   * in the reader's place, where it would hold up every other request. */
  if (in->opcode == OP_LOOKUP && (kind == NODE_ROOT || kind == NODE_APP_DIR) && limen_doc_model_importing (fs->model))
    return FALSE;
  switch (kind)
    {
    case NODE_ROOT:
    case NODE_BY_APP:
    case NODE_APP_DIR:
      return TRUE;
    case NODE_DOC_DIR:
      return in->opcode != OP_LOOKUP;   /* a lookup there opens the host file */
    default:
      return FALSE;
    }
}

static gpointer worker_func (gpointer data);

/* A new worker, when none waits to read and there is room; loop->lock held. */
static void
maybe_start_worker_locked (Loop *loop)
{
  if (loop->waiting > 0 || loop->threads->len >= MAX_WORKERS || loop->done)
    return;
  g_ptr_array_add (loop->threads, g_thread_new ("limen-fuse", worker_func, loop));
}

/* Read and answer requests while holding the reader's place. Returns with the place given
 * up: FALSE when the loop ends, TRUE with a request in @buf to answer. */
static gboolean
read_requests (Loop *loop, struct fuse_buf *buf)
{
  struct fuse_session *se = loop->fs->se;
  gboolean wake;

  for (;;)
    {
      int res = fuse_session_receive_buf (se, buf);

      if (res == -EINTR || res == -EAGAIN)
        continue;
      if (res <= 0 || fuse_session_exited (se))
        {
          g_mutex_lock (&loop->lock);
          if (res < 0 && loop->error == 0)
            loop->error = res;
          loop->done = TRUE;
          g_cond_broadcast (&loop->cond);
          g_mutex_unlock (&loop->lock);
          fuse_session_exit (se);
          return FALSE;
        }
      if (request_is_quick (loop->fs, buf))
        {
          fuse_session_process_buf (se, buf);
          continue;
        }
      g_mutex_lock (&loop->lock);
      loop->reader_free = TRUE;
      wake = loop->waiting > 0;
      if (!wake)
        maybe_start_worker_locked (loop);
      g_mutex_unlock (&loop->lock);
      /* Signalled after the unlock: a worker woken under the lock would only block on it
       * at once (a futex wait and wake more per request handed on). A waiter counted above
       * is already waiting, and one that finds the place taken waits again. */
      if (wake)
        g_cond_signal (&loop->cond);
      return TRUE;
    }
}

static gpointer
worker_func (gpointer data)
{
  Loop *loop = data;
  struct fuse_buf buf = { 0 };

  for (;;)
    {
      g_mutex_lock (&loop->lock);
      loop->waiting++;
      while (!loop->reader_free && !loop->done)
        g_cond_wait (&loop->cond, &loop->lock);
      loop->waiting--;
      if (loop->done)
        {
          g_mutex_unlock (&loop->lock);
          break;
        }
      loop->reader_free = FALSE;
      g_mutex_unlock (&loop->lock);
      if (!read_requests (loop, &buf))
        break;
      fuse_session_process_buf (loop->fs->se, &buf);
    }
  free (buf.mem);
  return NULL;
}

int
limen_fuse_loop_run (LimenFuse *fs)
{
  Loop loop = { .fs = fs, .reader_free = TRUE };

  g_mutex_init (&loop.lock);
  g_cond_init (&loop.cond);
  loop.threads = g_ptr_array_new ();
  g_mutex_lock (&loop.lock);
  maybe_start_worker_locked (&loop);
  g_mutex_unlock (&loop.lock);
  /* Workers start workers: join until none is left to join. */
  for (guint i = 0;; i++)
    {
      GThread *t;

      g_mutex_lock (&loop.lock);
      t = i < loop.threads->len ? loop.threads->pdata[i] : NULL;
      g_mutex_unlock (&loop.lock);
      if (t == NULL)
        break;
      g_thread_join (t);
    }
  g_ptr_array_unref (loop.threads);
  g_cond_clear (&loop.cond);
  g_mutex_clear (&loop.lock);
  return loop.error;
}
