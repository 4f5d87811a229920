/* Limen — the FileChooser dialog (KFileWidget) of liblimen-qt.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "shim-private.h"

#include <KSharedConfig>
#include <QKeyEvent>
#include <QList>
#include <QVector>
#include <QUrl>

class KFileWidget;

class LimenFileDialog : public _LimenQtDialog
{
public:
  LimenFileDialog (const LimenQtFileChooserSpec *spec, LimenQtFileChooserDone done, void *user_data);
  ~LimenFileDialog () override;

  /* Create and set up the KFileWidget (done once, right after the window is shown). */
  void build ();
  KFileWidget *fileWidget () const { return m_widget; }
  LimenQt::ChoicesWidget *choicesWidget () const { return m_choices; }
  /* The KFileWidget filter line for a portal filter ("*.txt *.md|Text"). */
  static QString filterLine (const LimenQtFilter &filter);

protected:
  void onFinished (bool accepted) override;
  void done (int result) override;
  /* Keys typed between the window's mapping and build() go to the name field after. */
  void keyPressEvent (QKeyEvent *event) override;
  void keyReleaseEvent (QKeyEvent *event) override;
  /* Return in the Name field or the view: see acceptViewSelection(). */
  bool eventFilter (QObject *watched, QEvent *event) override;

private:
  void report (const QList<QUrl> &urls);
  void reportMapped (const QList<QUrl> &urls);   /* remote URLs through kio-fuse, then report() */
  /* Open with several files selected in the view: answer them from the view when the Name
   * field holds just what KFileWidget wrote for them; false leaves it to KFileWidget. */
  bool acceptViewSelection ();
  bool acceptCurrentFolder ();
  void watchView (class QAbstractItemView *view);
  void selectNameStem ();   /* save: the name without its extension selected, as KDE's dialogs do */
  void applyMode ();      /* open/save, files or folders, from the portal method */
  void applyFilters ();
  void hideRemotePlaces ();
  bool refuseRemote (const QList<QUrl> &urls);   /* without kio-fuse: no Network, no bookmarked servers */   /* the filter combo, hidden when the app gave none */
  void saveState ();

  KFileWidget *m_widget = nullptr;
  struct PendingKey { int type; int key; Qt::KeyboardModifiers modifiers; QString text; };
  QVector<PendingKey> m_pending_keys;
  QList<QUrl> m_view_picked;   /* set by acceptViewSelection() or acceptCurrentFolder() */
  class QVBoxLayout *m_layout = nullptr;
  QString m_folder, m_current_file, m_current_name, m_accept_label;
  QStringList m_filter_lines;
  int m_current_filter = 0;
  bool m_directory = false, m_multiple = false;
  bool m_name_typed = false;
  bool m_remote_ok = false;    /* kio-fuse can give remote places a local path */   /* typed into the Name field since the view's selection changed */
  LimenQt::ChoicesWidget *m_choices = nullptr;
  LimenQtFileMode m_mode;
  int m_n_filters = 0;
  QStringList m_files;
  QString m_state_file;
  KSharedConfig::Ptr m_state;   /* KFileWidget keeps reading its group from it */
  LimenQtFileChooserDone m_done;
  void *m_user_data;
};
