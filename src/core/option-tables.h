/* Limen — one option table per portal method, shared by both daemons.
 *
 * limen-portal checks what an app passes against the app table of a method; limen-kde checks
 * what a frontend passes against the impl table, which is the app table plus the keys only a
 * frontend adds (never accepted from an app). Each option therefore has one type and one
 * limit, wherever it is checked.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "options.h"

G_BEGIN_DECLS

/* Account.GetUserInformation: the app's too long reason is dropped, a frontend's refused. */
extern const LimenOption limen_options_account_get_user_information[];
extern const LimenOption limen_options_impl_account_get_user_information[];

/* FileChooser.OpenFile, SaveFile, SaveFiles (app and impl alike). */
extern const LimenOption limen_options_file_chooser_open_file[];
extern const LimenOption limen_options_file_chooser_save_file[];
extern const LimenOption limen_options_file_chooser_save_files[];

/* Print.PreparePrint and Print.Print (the settings dicts are each side's own check).
 * PreparePrint's supported_output_file_formats: "pdf", "ps", "svg", each once. */
gboolean limen_validate_output_file_formats (const LimenOption *o, GVariant *v, GError **e);
extern const LimenOption limen_options_print_prepare_print[];
extern const LimenOption limen_options_print_print[];

/* Screenshot.Screenshot and PickColor; the impl table adds permission_store_checked.
 * Screenshot's target (version 3): exactly one of 1, 2, 4, 8. */
gboolean limen_validate_screenshot_target (const LimenOption *o, GVariant *v, GError **e);
extern const LimenOption limen_options_screenshot_screenshot[];
extern const LimenOption limen_options_impl_screenshot_screenshot[];
extern const LimenOption limen_options_screenshot_pick_color[];

/* Wallpaper.SetWallpaperURI / SetWallpaperFile. */
extern const LimenOption limen_options_wallpaper[];

/* Email.ComposeEmail; the impl table adds the attachments' host paths. */
extern const LimenOption limen_options_email_compose[];
extern const LimenOption limen_options_impl_email_compose[];

/* Inhibit.Inhibit. */
extern const LimenOption limen_options_inhibit_inhibit[];

/* ScreenCast; RemoteDesktop sessions take SelectSources too. restore_token is in no table:
 * limen-portal reads it itself and gives the backend only its restore_data (impl tables). */
extern const LimenOption limen_options_screen_cast_create_session[];
extern const LimenOption limen_options_screen_cast_select_sources[];
extern const LimenOption limen_options_impl_screen_cast_select_sources[];
extern const LimenOption limen_options_screen_cast_start[];
extern const LimenOption limen_options_screen_cast_open_pipewire_remote[];

/* RemoteDesktop (CreateSession as ScreenCast's). */
extern const LimenOption limen_options_remote_desktop_select_devices[];
extern const LimenOption limen_options_impl_remote_desktop_select_devices[];
extern const LimenOption limen_options_remote_desktop_start[];
extern const LimenOption limen_options_remote_desktop_notify[];
extern const LimenOption limen_options_remote_desktop_notify_pointer_axis[];
extern const LimenOption limen_options_remote_desktop_connect_to_eis[];

/* Clipboard; selection_owner_changed is the backend's signal, checked before it is passed on. */
extern const LimenOption limen_options_clipboard_request_clipboard[];
extern const LimenOption limen_options_clipboard_set_selection[];
extern const LimenOption limen_options_clipboard_selection_owner_changed[];

/* InputCapture (version 2); capabilities are 1 keyboard, 2 pointer, 4 touchscreen. Start's
 * restore_token is read by limen-portal itself (as ScreenCast's), which gives the backend the
 * restore_data it stood for. GetZones and SetPointerBarriers take the request table; Enable,
 * Disable and ConnectToEIS the plain one. Each barrier dict of SetPointerBarriers is checked
 * against the barrier table (barrier_id non-zero; required keys are the portal's check), the
 * backend's signals against theirs before they reach the app. */
extern const LimenOption limen_options_input_capture_create_session[];
extern const LimenOption limen_options_input_capture_create_session2[];
extern const LimenOption limen_options_input_capture_start[];
extern const LimenOption limen_options_input_capture_request[];
extern const LimenOption limen_options_input_capture_plain[];
extern const LimenOption limen_options_input_capture_release[];
extern const LimenOption limen_options_input_capture_barrier[];
extern const LimenOption limen_options_input_capture_activated[];
extern const LimenOption limen_options_input_capture_deactivated[];
extern const LimenOption limen_options_input_capture_zones_changed[];

/* Notification.AddNotification: the keys both daemons check alike (notification-options.h
 * normalises them for the next hop). Icons and sounds come in different forms on each side:
 * the frontend reads an app's, the impl table checks what a frontend passes on. */
extern const LimenOption limen_options_notification_add_notification[];
extern const LimenOption limen_options_impl_notification_add_notification[];

/* DynamicLauncher.PrepareInstall (RequestInstallToken takes the same keys). launcher_type is
 * one of the SupportedLauncherTypes bits; target an http(s) URL. A launcher's name is one
 * line of 1 to LIMEN_LAUNCHER_NAME_MAX bytes (limen_launcher_name_is_valid). */
#define LIMEN_LAUNCHER_APPLICATION 1
#define LIMEN_LAUNCHER_WEBAPP 2
#define LIMEN_LAUNCHER_NAME_MAX 256
extern const LimenOption limen_options_dynamic_launcher_prepare_install[];
gboolean limen_launcher_name_is_valid (const char *name);
/* A launcher's icon_v: the (sv) "bytes" icon inside (boxed at most twice), its data in
 * @bytes (1 byte to 4 MiB); NULL and InvalidArgument for anything else. */
GVariant *limen_launcher_icon_unbox (GVariant *icon_v, GBytes **bytes, GError **error);
/* Usb: CreateSession; EnumerateDevices, FinishAcquireDevices, ReleaseDevices and the impl
 * AcquireDevices take no options; AcquireDevices and each device's access dict (writable);
 * the device information dict the frontend gives the backend (properties: strings only). */
gboolean limen_validate_usb_properties (const LimenOption *o, GVariant *v, GError **e);
extern const LimenOption limen_options_usb_create_session[];
extern const LimenOption limen_options_usb_no_options[];
extern const LimenOption limen_options_usb_acquire_devices[];
extern const LimenOption limen_options_usb_device_access[];
extern const LimenOption limen_options_usb_device_info[];

/* OpenURI.OpenURI, OpenFile, OpenDirectory; the AppChooser backend's ChooseApplication takes
 * the activation_token the frontend passes on with the same limit. */
extern const LimenOption limen_options_open_uri_open_uri[];
extern const LimenOption limen_options_impl_app_chooser_choose_application[];

/* Access.AccessDialog (only a frontend calls it). */
extern const LimenOption limen_options_impl_access_access_dialog[];

/* GlobalShortcuts.CreateSession; BindShortcuts and ListShortcuts take the request table
 * (ConfigureShortcuts': shortcuts.h). */
extern const LimenOption limen_options_global_shortcuts_create_session[];
extern const LimenOption limen_options_global_shortcuts_request[];

/* The settings and page_setup dicts of the Print backend (GTK's keys). */
extern const LimenOption limen_options_impl_print_settings[];
extern const LimenOption limen_options_impl_print_page_setup[];

/* Validators shared by the tables above and their portals. */
gboolean limen_validate_abs_path (const LimenOption *o, GVariant *v, GError **e);    /* ay, absolute */
gboolean limen_validate_file_name (const LimenOption *o, GVariant *v, GError **e);   /* s; one with '/' is left out */
gboolean limen_validate_folder_or_drop (const LimenOption *o, GVariant *v, GError **e); /* ay; a relative one is left out */
gboolean limen_validate_email_address (const LimenOption *o, GVariant *v, GError **e);
gboolean limen_validate_email_addresses (const LimenOption *o, GVariant *v, GError **e);
gboolean limen_validate_single_line (const LimenOption *o, GVariant *v, GError **e); /* no CR/LF, ≤ max */
gboolean limen_validate_bits (const LimenOption *o, GVariant *v, GError **e);        /* u, bits of max (0 too) */
gboolean limen_validate_one_bit (const LimenOption *o, GVariant *v, GError **e);     /* u, exactly one bit of max */
gboolean limen_validate_persist_mode (const LimenOption *o, GVariant *v, GError **e); /* u, 0..2 */
gboolean limen_validate_clipboard_types (const LimenOption *o, GVariant *v, GError **e); /* as, ≤ max types */
/* A clipboard type as Wayland and X11 owners offer them: a MIME type (type/subtype with
 * parameters) or a target name such as UTF8_STRING or STRING, which GTK 3 and XWayland
 * owners list beside the MIME types. Printable ASCII, spaces only among parameters after
 * ';', at most 255 bytes. */
gboolean limen_clipboard_type_is_valid (const char *type);

G_END_DECLS
