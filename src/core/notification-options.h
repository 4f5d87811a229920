/* Limen — Notification.AddNotification's version 2 keys, checked and normalised alike in
 * limen-portal (what an app sends) and limen-kde (what any frontend sends).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "options.h"

G_BEGIN_DECLS

/* Longest markup-body an app may send, and longest one after sanitising (escaping a stray
 * '&' or '<' makes the text grow). */
#define LIMEN_NOTIFICATION_MARKUP_MAX 16384
#define LIMEN_NOTIFICATION_MARKUP_OUT_MAX (4 * LIMEN_NOTIFICATION_MARKUP_MAX)
#define LIMEN_NOTIFICATION_BUTTONS_MAX 64   /* the reference has no bound */

/* The specification's sets (NULL-terminated). */
extern const char * const limen_notification_categories[];
extern const char * const limen_notification_display_hints[];
extern const char * const limen_notification_button_purposes[];

/* @markup reduced to the specification's subset: <b>, <i> and <a href> with an http, https
 * or mailto link; every other tag, comment or processing instruction is removed (its text
 * kept), a stray '&', '<' or '>' escaped, tags closed in order. The result always parses as
 * XML content. NULL + InvalidArgument for text that is not UTF-8 or grows too large. */
char *limen_notification_markup_sanitize (const char *markup, GError **error);

/* The text of sanitised markup without its tags and with entities decoded (for a backend
 * that takes plain text only). */
char *limen_notification_markup_to_plain (const char *sanitized);

/* TRUE for a category of the specification or a vendor's "x-VENDOR.NAME". */
gboolean limen_notification_category_is_valid (const char *category);
/* A themed icon name: 1 to 256 of [A-Za-z0-9._-] (action names are judged apart, more
 * loosely: see limen_validate_notification_action). */
gboolean limen_notification_name_is_valid (const char *name);
/* TRUE for a button purpose of the specification or a vendor's "x-VENDOR.NAME". */
gboolean limen_notification_purpose_is_valid (const char *purpose);

/* Validators for the option table (option-tables.c). */
gboolean limen_validate_notification_markup (const LimenOption *o, GVariant *v, GError **e);
gboolean limen_validate_notification_category (const LimenOption *o, GVariant *v, GError **e);
gboolean limen_validate_notification_display_hints (const LimenOption *o, GVariant *v, GError **e);
gboolean limen_validate_notification_buttons (const LimenOption *o, GVariant *v, GError **e);
gboolean limen_validate_notification_priority (const LimenOption *o, GVariant *v, GError **e);
gboolean limen_validate_notification_action (const LimenOption *o, GVariant *v, GError **e);
gboolean limen_validate_notification_target (const LimenOption *o, GVariant *v, GError **e);

/* @filtered (a vardict that passed limen_options_notification_add_notification) rewritten
 * for passing on: markup-body sanitised, display-hint without unknown or repeated hints,
 * buttons with only label, action, target and purpose. With @version_2 FALSE (a version 1
 * backend) the version 2 keys are left out and a markup-body becomes the body when there is
 * none. Returns a floating vardict, or NULL + InvalidArgument. */
GVariant *limen_notification_normalize (GVariant *filtered, gboolean version_2, GError **error);

G_END_DECLS
