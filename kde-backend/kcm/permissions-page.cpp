/* Limen — the permissions page.
 *
 * Every change goes straight to the permission store (or, for files, the document portal)
 * and the page is read again from there: what it shows is what the store holds, whoever
 * wrote it. It also reads it again when anyone else changes the store (its Changed signal:
 * limen-permissions, flatpak permission-reset, a portal recording a new grant), so an open
 * page never shows what is gone. The frontend and limen-kde act on the same signal, so a
 * revocation here ends what it granted in sessions already running.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "permissions-page.h"

#include "app-text.h"

#include <QComboBox>
#include <QGridLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QIcon>
#include <QKeySequence>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QScrollBar>
#include <QScrollArea>
#include <QSplitter>
#include <QTimer>
#include <QVBoxLayout>

#include <KLocalizedString>
#include <KMessageBox>
#include <KService>

extern "C" {
#include "permission-model.h"
}

namespace
{
const int AppIdRole = Qt::UserRole + 1;

/* An app's name and icon from its desktop file, as the launcher shows it. */
void describeApp (const QString &appId, QString *name, QIcon *icon)
{
  if (appId.isEmpty ())
    {
      *name = i18n ("Apps that could not be identified");
      *icon = QIcon::fromTheme (QStringLiteral ("dialog-question"));
      return;
    }
  KService::Ptr service = KService::serviceByDesktopName (appId);
  *name = service && !service->name ().isEmpty () ? service->name () : appId;
  *icon = QIcon::fromTheme (service && !service->icon ().isEmpty () ? service->icon () : QStringLiteral ("application-x-executable"));
}

/* What a global-shortcuts grant holds, one shortcut a line, its keys as this desktop names
 * them ("Strg+Alt+T" in German). */
QString describeShortcuts (const LimenGrant *grant)
{
  QStringList lines;
  GVariant *held = limen_grant_shortcuts (grant);
  GVariantIter iter;
  const char *id, *description, *keys;

  if (held)
    {
      g_variant_iter_init (&iter, held);
      while (g_variant_iter_next (&iter, "(&s&s&s)", &id, &description, &keys))
        {
          const QString what = QString::fromUtf8 (*description ? description : id);
          const QString native = QKeySequence::fromString (QString::fromUtf8 (keys), QKeySequence::PortableText)
                                   .toString (QKeySequence::NativeText);
          lines << (native.isEmpty () ? i18nc ("a global shortcut without keys", "%1: no keys", what)
                                      : i18nc ("a global shortcut: what it does: its keys", "%1: %2", what, native));
        }
      g_variant_unref (held);
    }
  QStringList refused;
  for (guint i = 0; grant->perms[i]; i++)
    if (*grant->perms[i])
      refused << QString::fromUtf8 (grant->perms[i]);
  if (!refused.isEmpty ())
    lines << i18n ("Refused: %1", refused.join (QStringLiteral (", ")));
  return lines.isEmpty () ? i18n ("None") : lines.join (QLatin1Char ('\n'));
}

void onStoreChanged (GDBusConnection *, const char *, const char *, const char *, const char *, GVariant *,
                     gpointer page)
{
  static_cast<LimenPermissionsPage *> (page)->storeChanged ();
}

struct GrantList
{
  GPtrArray *array = nullptr;
  ~GrantList () { if (array) g_ptr_array_unref (array); }
};
}

LimenPermissionsPage::LimenPermissionsPage (QWidget *parent)
  : QWidget (parent)
{
  GError *error = nullptr;

  limen_perm_model_init_i18n ();
  m_bus = g_bus_get_sync (G_BUS_TYPE_SESSION, nullptr, &error);
  auto *layout = new QHBoxLayout (this);
  auto *splitter = new QSplitter (this);
  layout->addWidget (splitter);

  m_apps = new QListWidget (splitter);
  m_apps->setObjectName (QStringLiteral ("apps"));
  m_apps->setIconSize (QSize (32, 32));
  m_apps->setWordWrap (true);
  m_apps->setHorizontalScrollBarPolicy (Qt::ScrollBarAlwaysOff);
  m_apps->setAccessibleName (i18n ("Apps holding permissions"));
  connect (m_apps, &QListWidget::currentRowChanged, this, &LimenPermissionsPage::showSelected);

  auto *right = new QWidget (splitter);
  auto *rightLayout = new QVBoxLayout (right);
  rightLayout->setContentsMargins (0, 0, 0, 0);
  m_header = new QLabel (right);
  m_header->setObjectName (QStringLiteral ("header"));
  /* Every text on this page can come from an app (its desktop name, a file's name, a
   * shortcut's description, a window's title): plain text, never markup. */
  m_header->setTextFormat (Qt::PlainText);
  m_header->setWordWrap (true);
  QFont big = m_header->font ();
  big.setPointSizeF (big.pointSizeF () * 1.3);
  big.setBold (true);
  m_header->setFont (big);
  m_message = new QLabel (right);
  m_message->setObjectName (QStringLiteral ("message"));
  m_message->setTextFormat (Qt::PlainText);
  m_message->setWordWrap (true);
  m_scroll = new QScrollArea (right);
  m_scroll->setWidgetResizable (true);
  m_scroll->setFrameShape (QFrame::NoFrame);
  m_reset = new QPushButton (QIcon::fromTheme (QStringLiteral ("edit-clear-all")), i18n ("Reset this app"), right);
  m_reset->setObjectName (QStringLiteral ("reset"));
  m_reset->setToolTip (i18n ("Take back everything this app was given"));
  connect (m_reset, &QPushButton::clicked, this, &LimenPermissionsPage::resetApp);
  auto *buttons = new QHBoxLayout;
  buttons->addStretch ();
  buttons->addWidget (m_reset);
  rightLayout->addWidget (m_header);
  rightLayout->addWidget (m_message);
  rightLayout->addWidget (m_scroll, 1);
  rightLayout->addLayout (buttons);
  splitter->setStretchFactor (1, 1);

  /* Changes come in bursts (a reset is one call per entry): one reload for a burst. */
  m_storeTimer = new QTimer (this);
  m_storeTimer->setSingleShot (true);
  m_storeTimer->setInterval (100);
  connect (m_storeTimer, &QTimer::timeout, this, &LimenPermissionsPage::reload);
  if (!m_bus)
    reportError (error);
  else
    m_watch = g_dbus_connection_signal_subscribe (m_bus, "org.freedesktop.impl.portal.PermissionStore",
                                                  "org.freedesktop.impl.portal.PermissionStore", "Changed",
                                                  "/org/freedesktop/impl/portal/PermissionStore", nullptr,
                                                  G_DBUS_SIGNAL_FLAGS_NONE, onStoreChanged, this, nullptr);
}

LimenPermissionsPage::~LimenPermissionsPage ()
{
  if (m_watch)
    g_dbus_connection_signal_unsubscribe (m_bus, m_watch);
  g_clear_object (&m_bus);
}

void LimenPermissionsPage::storeChanged ()
{
  m_storeTimer->start ();
}

void LimenPermissionsPage::reportError (void *e)
{
  GError *error = static_cast<GError *> (e);

  g_dbus_error_strip_remote_error (error);
  m_message->setText (i18n ("The permission store could not be read: %1", QString::fromUtf8 (error->message)));
  g_error_free (error);
}

void LimenPermissionsPage::reload ()
{
  GError *error = nullptr;
  const QString keep = m_app;

  if (!m_bus)
    return;
  GPtrArray *apps = limen_perm_model_list_apps (m_bus, &error);
  QSignalBlocker block (m_apps);
  m_apps->clear ();
  if (!apps)
    {
      reportError (error);
      return;
    }
  for (guint i = 0; i < apps->len; i++)
    {
      const QString id = QString::fromUtf8 (static_cast<const char *> (g_ptr_array_index (apps, i)));
      QString name;
      QIcon icon;
      describeApp (id, &name, &icon);
      auto *item = new QListWidgetItem (icon, name, m_apps);
      item->setData (AppIdRole, id);
      item->setToolTip (LimenQt::plainToolTip (id));
    }
  g_ptr_array_unref (apps);
  m_apps->sortItems ();
  /* Wide enough for the longest name (in any language, at any scale), never cut off. */
  m_apps->setMinimumWidth (std::min (m_apps->sizeHintForColumn (0) + 2 * m_apps->frameWidth ()
                                       + m_apps->verticalScrollBar ()->sizeHint ().width (),
                                     fontMetrics ().averageCharWidth () * 48));
  block.unblock ();
  if (!selectApp (keep) && m_apps->count ())
    m_apps->setCurrentRow (0);
  else if (!m_apps->count ())
    {
      m_app.clear ();
      showSelected ();
    }
}

bool LimenPermissionsPage::selectApp (const QString &appId)
{
  for (int i = 0; i < m_apps->count (); i++)
    if (m_apps->item (i)->data (AppIdRole).toString () == appId)
      {
        m_apps->setCurrentRow (i);
        showSelected ();
        return true;
      }
  return false;
}

void LimenPermissionsPage::showSelected ()
{
  GError *error = nullptr;
  QListWidgetItem *item = m_apps->currentItem ();
  auto *content = new QWidget;
  auto *layout = new QVBoxLayout (content);

  m_message->clear ();
  m_app = item ? item->data (AppIdRole).toString () : QString ();
  m_header->setText (item ? LimenQt::breakable (item->text ()) : i18n ("No app holds any permission"));
  m_reset->setEnabled (item != nullptr);
  if (item)
    {
      GrantList grants;
      grants.array = limen_perm_model_show_app (m_bus, m_app.toUtf8 ().constData (), &error);
      if (!grants.array)
        reportError (error);
      QGroupBox *box = nullptr;
      int group = -1, row = 0;
      for (guint i = 0; grants.array && i < grants.array->len; i++)
        {
          auto *grant = static_cast<LimenGrant *> (g_ptr_array_index (grants.array, i));
          if (int (grant->desc->group) != group)
            {
              group = grant->desc->group;
              box = new QGroupBox (QString::fromUtf8 (limen_grant_group_title (grant->desc->group)), content);
              new QGridLayout (box);
              layout->addWidget (box);
              row = 0;
            }
          addGrantRow (box, grant, row++);
        }
      if (grants.array && grants.array->len == 0)
        m_message->setText (i18n ("This app holds nothing."));
    }
  layout->addStretch ();
  m_scroll->setWidget (content);
}

void LimenPermissionsPage::addGrantRow (QWidget *box, void *g, int row)
{
  auto *grant = static_cast<LimenGrant *> (g);
  auto *grid = static_cast<QGridLayout *> (box->layout ());
  const QString table = QString::fromUtf8 (grant->table), id = QString::fromUtf8 (grant->id);
  const QString key = table + QLatin1Char (':') + id;

  auto *title = new QLabel (QString::fromUtf8 (grant->title), box);
  title->setTextFormat (Qt::PlainText);
  QFont bold = title->font ();
  bold.setBold (true);
  title->setFont (bold);
  /* A plain switch says it all with its combo box; the detail would only repeat it. */
  const bool plainSwitch = grant->desc->kind == LIMEN_GRANT_SWITCH && *limen_grant_value (grant)
                           && !g_str_has_prefix (grant->id, "device:");
  auto *detail = new QLabel (grant->desc->kind == LIMEN_GRANT_SHORTCUTS ? describeShortcuts (grant)
                                                                         : QString::fromUtf8 (grant->detail), box);
  detail->setTextFormat (Qt::PlainText);
  detail->setVisible (!plainSwitch);
  detail->setWordWrap (true);
  detail->setTextInteractionFlags (Qt::TextSelectableByMouse);
  detail->setObjectName (QStringLiteral ("detail:") + key);
  auto *text = new QVBoxLayout;
  text->setSpacing (0);
  text->addWidget (title);
  text->addWidget (detail);
  grid->addLayout (text, row, 0);
  grid->setColumnStretch (0, 1);

  if (limen_grant_is_switch (grant))
    {
      auto *combo = new QComboBox (box);
      combo->setObjectName (QStringLiteral ("value:") + key);
      combo->setAccessibleName (i18n ("Permission for %1", QString::fromUtf8 (grant->title)));
      combo->addItem (i18n ("Allow"), QStringLiteral ("yes"));
      if (grant->desc->kind != LIMEN_GRANT_LOCATION)
        combo->addItem (i18n ("Ask"), QStringLiteral ("ask"));
      combo->addItem (i18n ("Deny"), QStringLiteral ("no"));
      const int current = combo->findData (QString::fromUtf8 (limen_grant_value (grant)));
      if (current < 0)
        combo->insertItem (0, QString::fromUtf8 (grant->detail), QString ());
      combo->setCurrentIndex (std::max (current, 0));
      connect (combo, QOverload<int>::of (&QComboBox::activated), this,
               [this, combo, table, id] (int) { setValue (table, id, combo->currentData ().toString ()); });
      grid->addWidget (combo, row, 1, Qt::AlignVCenter);
    }
  auto *revokeButton = new QPushButton (QIcon::fromTheme (QStringLiteral ("edit-delete-remove")), i18n ("Revoke"), box);
  revokeButton->setObjectName (QStringLiteral ("revoke:") + key);
  revokeButton->setToolTip (i18n ("Take this back from the app"));
  connect (revokeButton, &QPushButton::clicked, this, [this, table, id] { revoke (table, id); });
  grid->addWidget (revokeButton, row, 2, Qt::AlignVCenter);
}

/* After a click: the clicked widget is still in its signal, so it must outlive it. */
void LimenPermissionsPage::reloadLater ()
{
  QMetaObject::invokeMethod (this, &LimenPermissionsPage::reload, Qt::QueuedConnection);
}

void LimenPermissionsPage::setValue (const QString &table, const QString &id, const QString &value)
{
  GError *error = nullptr;

  if (value.isEmpty ())
    return;
  if (!limen_perm_model_set (m_bus, m_app.toUtf8 ().constData (), table.toUtf8 ().constData (),
                             id.toUtf8 ().constData (), value.toUtf8 ().constData (), &error))
    {
      reportError (error);
      return;
    }
  reloadLater ();
}

void LimenPermissionsPage::revoke (const QString &table, const QString &id)
{
  GError *error = nullptr;

  if (!limen_perm_model_revoke (m_bus, m_app.toUtf8 ().constData (), table.toUtf8 ().constData (),
                                id.toUtf8 ().constData (), nullptr, &error))
    {
      reportError (error);
      return;
    }
  reloadLater ();
}

void LimenPermissionsPage::resetApp ()
{
  GError *error = nullptr;
  QListWidgetItem *item = m_apps->currentItem ();

  if (!item)
    return;
  if (KMessageBox::warningContinueCancel (this,
                                          QStringLiteral ("<qt>")
                                            + i18n ("Take back every permission %1 holds? It will have to ask again.",
                                                    LimenQt::breakable (item->text ()).toHtmlEscaped ())
                                            + QStringLiteral ("</qt>"),
                                          i18n ("Reset this app"), KGuiItem (i18n ("Reset"), QStringLiteral ("edit-clear-all")))
      != KMessageBox::Continue)
    return;
  if (!limen_perm_model_reset (m_bus, m_app.toUtf8 ().constData (), nullptr, &error))
    {
      reportError (error);
      return;
    }
  reloadLater ();
}
