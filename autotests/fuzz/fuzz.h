/* A Limen fuzz target. Each fuzz-*.c defines the libFuzzer entry point, which checks one
 * input and aborts (g_error, g_assert) on anything wrong, and the seeds that mutation starts
 * from. Built with LIMEN_FUZZ_ENGINE=libfuzzer the target is a libFuzzer binary; otherwise
 * standalone.c drives it with a bounded, seeded mutation loop (the default test run).
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <glib.h>
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* Appends the target's seed inputs (GBytes) to @seeds. */
void limen_fuzz_seeds (GPtrArray *seeds);

/* Byte strings worth inserting when mutating (tags, magic numbers), NULL-terminated. */
extern const char *const limen_fuzz_tokens[];
