/* Limen — the permissions page: apps on the left, what the selected one holds on the right.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <QWidget>

typedef struct _GDBusConnection GDBusConnection;
class QListWidget;
class QLabel;
class QPushButton;
class QVBoxLayout;
class QScrollArea;
class QTimer;

class LimenPermissionsPage : public QWidget
{
  Q_OBJECT
public:
  explicit LimenPermissionsPage (QWidget *parent = nullptr);
  ~LimenPermissionsPage () override;

  /* Read the list of apps again (keeps the selection when the app is still there). */
  void reload ();
  /* Select @appId ("" = the unidentified apps); FALSE when it holds nothing. */
  bool selectApp (const QString &appId);
  /* The permission store changed (anyone's change): read it again shortly. */
  void storeChanged ();

private:
  void showSelected ();
  void reloadLater ();
  void addGrantRow (QWidget *box, void *grant, int row);
  void revoke (const QString &table, const QString &id);
  void setValue (const QString &table, const QString &id, const QString &value);
  void resetApp ();
  void reportError (void *error);

  GDBusConnection *m_bus = nullptr;
  QListWidget *m_apps;
  QLabel *m_header;
  QLabel *m_message;
  QScrollArea *m_scroll;
  QPushButton *m_reset;
  QString m_app;
  QTimer *m_storeTimer;
  unsigned m_watch = 0;
};
