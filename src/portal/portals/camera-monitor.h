/* Limen — which cameras PipeWire has, kept current as they come and go.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Called on the main thread whenever the set of camera nodes changed, with the node ids
 * (a Video/Source node whose media.role is Camera) in the order PipeWire announced them;
 * also once PipeWire's first listing is complete and on every failed connection attempt, so
 * the first call after start is the first answer, cameras or none. */
typedef void (*LimenCameraMonitorFunc) (const guint32 *nodes, guint n_nodes, gpointer user_data);

/* Watch PipeWire for cameras in a thread of its own; reconnects when the daemon goes away
 * or was not there yet (no daemon: no camera, logged once). Call once, from the main thread. */
void limen_camera_monitor_start (LimenCameraMonitorFunc func, gpointer user_data);

/* The camera nodes known now (main thread); @n_nodes gets their number. */
const guint32 *limen_camera_monitor_get_nodes (guint *n_nodes);

G_END_DECLS
