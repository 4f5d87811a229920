/* limen-documents — who a pid is, remembered for the FUSE gate.
 *
 * Every path walk through a gate entry asks who sent it; identifying a process reads
 * several /proc files. The answer is kept per pid together with the process's start
 * time, so a reused pid is never taken for the process that had it before.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "fuse-pid-cache.h"

#include <string.h>

/* Within this window a pid is not re-checked against /proc: reusing a pid takes the
 * kernel through the whole pid space (pid_max allocations), far beyond what fits here. */
#define PID_RECHECK_US 20000
/* Bounded: a flood of short-lived processes must not grow the daemon. */
#define PID_CACHE_MAX 512

typedef struct {
  guint64  start_time;
  gint64   checked_at;      /* monotonic µs of the last start-time check */
  gboolean host;
  char    *app;             /* NULL for the host or when unidentifiable */
} PidEntry;

struct _LimenFusePidCache {
  GMutex      lock;
  GHashTable *pids;         /* pid → PidEntry */
  GHashTable *plain_cgroups; /* of guint64 cgroup ids: ids are never reused while the system runs */
};

static void
pid_entry_free (PidEntry *e)
{
  g_free (e->app);
  g_free (e);
}

LimenFusePidCache *
limen_fuse_pid_cache_new (void)
{
  LimenFusePidCache *cache = g_new0 (LimenFusePidCache, 1);

  g_mutex_init (&cache->lock);
  cache->pids = g_hash_table_new_full (g_direct_hash, g_direct_equal, NULL, (GDestroyNotify) pid_entry_free);
  cache->plain_cgroups = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  return cache;
}

int
limen_fuse_pid_cache_check_recent (LimenFusePidCache *cache, pid_t pid, gint64 now, const char *view_app)
{
  PidEntry *e;
  int answer = -1;

  g_mutex_lock (&cache->lock);
  e = g_hash_table_lookup (cache->pids, GINT_TO_POINTER (pid));
  if (e && now - e->checked_at < PID_RECHECK_US)
    answer = e->host || (view_app && e->app && e->app[0] && strcmp (e->app, view_app) == 0);
  g_mutex_unlock (&cache->lock);
  return answer;
}

gboolean
limen_fuse_pid_cache_lookup (LimenFusePidCache *cache, pid_t pid, guint64 start, gint64 now,
                             gboolean *host, char **app)
{
  PidEntry *e;
  gboolean found = FALSE;

  g_mutex_lock (&cache->lock);
  e = g_hash_table_lookup (cache->pids, GINT_TO_POINTER (pid));
  if (e && e->start_time == start)
    {
      e->checked_at = now;
      *host = e->host;
      *app = g_strdup (e->app);
      found = TRUE;
    }
  g_mutex_unlock (&cache->lock);
  return found;
}

void
limen_fuse_pid_cache_store (LimenFusePidCache *cache, pid_t pid, guint64 start, gint64 now,
                            gboolean host, const char *app)
{
  PidEntry *e = g_new0 (PidEntry, 1);

  e->start_time = start;
  e->checked_at = now;
  e->host = host;
  e->app = g_strdup (app);
  g_mutex_lock (&cache->lock);
  if (g_hash_table_size (cache->pids) > PID_CACHE_MAX)
    g_hash_table_remove_all (cache->pids);
  g_hash_table_replace (cache->pids, GINT_TO_POINTER (pid), e);
  g_mutex_unlock (&cache->lock);
}

gboolean
limen_fuse_pid_cache_cgroup_is_plain (LimenFusePidCache *cache, guint64 id)
{
  gboolean plain;

  g_mutex_lock (&cache->lock);
  plain = g_hash_table_contains (cache->plain_cgroups, &id);
  g_mutex_unlock (&cache->lock);
  return plain;
}

void
limen_fuse_pid_cache_set_cgroup_plain (LimenFusePidCache *cache, guint64 id)
{
  g_mutex_lock (&cache->lock);
  if (g_hash_table_size (cache->plain_cgroups) > PID_CACHE_MAX)
    g_hash_table_remove_all (cache->plain_cgroups);
  g_hash_table_add (cache->plain_cgroups, g_memdup2 (&id, sizeof id));
  g_mutex_unlock (&cache->lock);
}
