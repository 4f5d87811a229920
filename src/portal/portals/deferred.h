/* Limen — portals' links to system services that no caller waits for at start.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * GIO's memory and power-profile monitors and Realtime's system bus connection each start
 * threads and round trips on the system bus. Made while limen-portal starts, they compete
 * with its first replies for the CPU (a tenth of a cold start on two cores), so main.c
 * starts them shortly after the daemon serves; their answers arrive asynchronously in
 * any case. A portal that needs one sooner (a Realtime call) starts it itself; a second
 * start is a no-op. */
#pragma once

void limen_memory_monitor_start (void);
void limen_power_profile_monitor_start (void);
void limen_realtime_start (void);
