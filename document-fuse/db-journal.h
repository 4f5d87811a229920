/* limen-documents — the file of changes answered but not yet in the database.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct _LimenDbJournal LimenDbJournal;

/* Open (creating) the journal at @path. *@owner is TRUE when this process holds its lock,
 * which only one process at a time does: only the owner may append or empty it. */
LimenDbJournal *limen_db_journal_open (const char *path, gboolean *owner, GError **error);
void limen_db_journal_close (LimenDbJournal *journal);

/* Append one transaction (a GVariant "(tav)": its sequence number and records) with a single write(): once
 * this returns TRUE it is in the file, and a crash of this process cannot tear it. */
gboolean limen_db_journal_append (LimenDbJournal *journal, GVariant *transaction, GError **error);

/* Every complete transaction in the file, oldest first ("(tav)" each); a torn or damaged tail
 * (a crash in the middle of a write) ends the list. */
GPtrArray *limen_db_journal_read (LimenDbJournal *journal);

/* Empty the file (its transactions are in the database now). */
gboolean limen_db_journal_clear (LimenDbJournal *journal, GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (LimenDbJournal, limen_db_journal_close)

G_END_DECLS
