/* Limen — where a test build finds its own helpers (validators, the Qt shim, the Wayland
 * clients) without installing them.
 *
 * An installed binary knows only its install paths: nothing of the build tree is compiled
 * in, so packages built in two folders are the same and an installed daemon never loads a
 * module from wherever it was built. A build with LIMEN_TEST_HOOKS (test harnesses only,
 * never shipped) honours LIMEN_BUILD_DIR, which the harness sets to the build tree.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* @relative (a path inside the build tree, "src/validators/limen-validate-icon") under
 * $LIMEN_BUILD_DIR when the build has test hooks, that variable is set and the file is
 * there; else @installed. A newly allocated string. */
char *limen_uninstalled_path (const char *relative, const char *installed);

G_END_DECLS
