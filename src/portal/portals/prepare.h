/* Limen — portals' start-up work that needs no session bus.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * limen-portal's prepare step calls these on a thread of its own while the main thread
 * connects to the session bus (see LimenDaemonSpec.prepare): each starts a GIO monitor or
 * a system bus connection, whose answers then arrive on the main loop. A portal's _new
 * calls its own again (a no-op once done), so it also works without the prepare step. */
#pragma once

void limen_memory_monitor_prepare (void);
void limen_power_profile_monitor_prepare (void);
void limen_realtime_prepare (void);
