/* Limen — limen-kde as an X11 session management (XSMP) client of ksmserver.
 *
 * Plasma's session manager asks its XSMP clients before logout; a client that asks to
 * interact may cancel the logout. This module holds that connection while someone
 * needs it (limen_kde_sm_hold/release) and reports the session manager's questions
 * to the Inhibit portal, which decides.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  /* The session manager asks before a logout. @can_cancel is FALSE when its interact
   * style forbids a cancel. Answer with limen_kde_sm_answer(), soon. */
  void (*query_end) (gboolean can_cancel, gpointer user_data);
  /* The logout was cancelled (by us or another client), or the connection went away
   * while asking: the session goes on. */
  void (*cancelled) (gpointer user_data);
  /* The interaction asked for by limen_kde_sm_answer(TRUE) is granted, maybe much later
   * (ksmserver grants one client at a time): TRUE to cancel still, FALSE to let the
   * logout go on after all. */
  gboolean (*confirm_cancel) (gpointer user_data);
} LimenKdeSmCallbacks;

/* Set the callbacks (once, at start). */
void limen_kde_sm_init (const LimenKdeSmCallbacks *callbacks, gpointer user_data);

/* One more user of the connection: the first connects (in a worker thread) to the
 * session manager named by SESSION_MANAGER; without one, logs once and does nothing. */
void limen_kde_sm_hold (void);

/* One user less: the last closes the connection. */
void limen_kde_sm_release (void);

/* Answer the pending query_end: @cancel asks the session manager to cancel the logout
 * (through an interaction) in the name of @who (an app id, shown by ksmserver as the
 * program that cancelled; NULL: limen-kde), else the save is done and the logout may
 * go on. */
void limen_kde_sm_answer (gboolean cancel, const char *who);


G_END_DECLS
