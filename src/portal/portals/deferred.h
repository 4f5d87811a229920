/* Limen — portals' links to system services that no caller waits for at start.
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * GIO's memory monitor and Realtime's system bus connection each start threads and round
 * trips on the system bus. Made while limen-portal starts, they compete with its first
 * replies for the CPU (with the power-profile monitor, a tenth of a cold start on two
 * cores), so main.c starts them shortly after the daemon serves: neither has state a
 * caller reads (the memory monitor only signals; a Realtime call that comes first starts
 * the lookup itself and waits for it; a second start is a no-op). The power-profile
 * monitor has a property and starts as soon as the interfaces are exported. */
#pragma once

void limen_memory_monitor_start (void);
void limen_power_profile_monitor_start (void);
void limen_realtime_start (void);
