/* Limen — the AppChooser dialog: the handlers the frontend offers (named and iconed
 * through KService), the last choice first, and a search over every application.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "shim-private.h"

#include <KApplicationTrader>
#include <KLocalizedString>
#include <KStandardGuiItem>
#include <KService>
#include <QDialogButtonBox>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMimeDatabase>
#include <QPushButton>
#include <QUrl>
#include <QVBoxLayout>

using LimenQt::str;

namespace {

QString desktopId (const KService::Ptr &service)
{
  QString id = service->storageId ();
  if (id.endsWith (QLatin1String (".desktop")))
    id.chop (8);
  return id;
}

class AppChooserDialog : public _LimenQtDialog
{
public:
  AppChooserDialog (const LimenQtAppChooserSpec *spec, LimenQtAppChooserDone done, void *user_data)
    : _LimenQtDialog (&spec->window), m_last (str (spec->last_choice)), m_done (done), m_user_data (user_data)
  {
    setObjectName (QStringLiteral ("limen-app-chooser"));
    setWindowTitle (i18nc ("@title:window", "Open With"));
    auto *layout = new QVBoxLayout (this);
    QString what = str (spec->uri);
    if (!what.isEmpty ())
      what = QUrl (what).fileName ().isEmpty () ? what : QUrl (what).fileName ();
    /* A long link (it may run to 16 KiB) has no place to wrap: its middle gives way. */
    if (what.size () > 120)
      what = what.left (70) + QStringLiteral ("…") + what.right (49);
    QString type = str (spec->content_type);
    QString typeName = type.isEmpty () ? QString () : QMimeDatabase ().mimeTypeForName (type).comment ();
    QString text = !what.isEmpty () ? i18n ("Choose an application to open “%1”.", LimenQt::breakable (what))
                 : !typeName.isEmpty () ? i18n ("Choose an application to open this %1.", typeName)
                 : i18n ("Choose an application.");
    auto *label = new QLabel (text, this);
    label->setWordWrap (true);
    label->setTextFormat (Qt::PlainText);
    layout->addWidget (label);

    m_list = new QListWidget (this);
    m_list->setObjectName (QStringLiteral ("choices"));
    m_list->setIconSize (QSize (32, 32));
    layout->addWidget (m_list, 1);

    m_search = new QLineEdit (this);
    m_search->setObjectName (QStringLiteral ("search"));
    m_search->setPlaceholderText (i18nc ("@info:placeholder", "Search all applications…"));
    m_search->setClearButtonEnabled (true);
    m_search->hide ();
    layout->addWidget (m_search);

    auto *buttons = new QDialogButtonBox (this);
    m_other = buttons->addButton (i18nc ("@action:button", "&Other Application…"), QDialogButtonBox::ActionRole);
    m_open = buttons->addButton (i18nc ("@action:button", "&Open"), QDialogButtonBox::AcceptRole);
    /* KDE's own Cancel item: translated by KWidgetsAddons' catalog, with its icon. */
    KGuiItem::assign (buttons->addButton (QDialogButtonBox::Cancel), KStandardGuiItem::cancel ());
    m_open->setObjectName (QStringLiteral ("open"));
    m_other->setObjectName (QStringLiteral ("other"));
    layout->addWidget (buttons);
    connect (buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect (buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect (m_other, &QPushButton::clicked, this, [this] {
      m_other->setEnabled (false);
      m_search->show ();
      m_search->setFocus ();
      fillAll ();
    });
    connect (m_search, &QLineEdit::textChanged, this, [this] { filter (); });
    connect (m_list, &QListWidget::itemActivated, this, [this] { accept (); });
    connect (m_list, &QListWidget::currentItemChanged, this, [this] { m_open->setEnabled (m_list->currentItem ()); });

    QStringList ids;
    for (size_t i = 0; i < spec->n_choices; i++)
      ids += str (spec->choices[i]);
    setChoices (ids);
    resize (QSize (420, 460));
  }

  void setChoices (const QStringList &ids)
  {
    m_choices = ids;
    if (m_search->isVisible ())
      fillAll ();
    else
      fill (ids);
  }

protected:
  void onFinished (bool accepted) override
  {
    QListWidgetItem *item = m_list->currentItem ();
    QByteArray id = item ? item->data (Qt::UserRole).toString ().toUtf8 () : QByteArray ();
    complete ([&] {
      m_done (this, accepted && !id.isEmpty () ? LIMEN_QT_RESPONSE_OK : LIMEN_QT_RESPONSE_CANCELLED,
              id.constData (), m_user_data);
    });
  }

private:
  void addItem (const QString &id, const KService::Ptr &service)
  {
    QString name = service ? service->name () : id;
    auto *item = new QListWidgetItem (name);
    item->setData (Qt::UserRole, id);
    item->setToolTip (LimenQt::plainToolTip (service && !service->comment ().isEmpty () ? service->comment () : id));
    QIcon icon = QIcon::fromTheme (service ? service->icon () : QString (),
                                   QIcon::fromTheme (QStringLiteral ("application-x-executable")));
    item->setIcon (icon);
    m_list->addItem (item);
  }

  /* The offered handlers, the last choice first and selected. */
  void fill (const QStringList &ids)
  {
    m_list->clear ();
    QStringList ordered = ids;
    if (!m_last.isEmpty () && ordered.removeAll (m_last) > 0)
      ordered.prepend (m_last);
    for (const QString &id : ordered)
      addItem (id, KService::serviceByDesktopName (id));
    m_list->setCurrentRow (m_list->count () ? 0 : -1);
    m_open->setEnabled (m_list->currentItem ());
  }

  void fillAll ()
  {
    m_list->clear ();
    const KService::List all = KApplicationTrader::query ([] (const KService::Ptr &s) { return !s->noDisplay (); });
    QStringList seen;
    for (const QString &id : qAsConst (m_choices))
      {
        addItem (id, KService::serviceByDesktopName (id));
        seen += id;
      }
    for (const KService::Ptr &s : all)
      {
        QString id = desktopId (s);
        if (!seen.contains (id))
          addItem (id, s);
      }
    filter ();
  }

  void filter ()
  {
    QString needle = m_search->text ().trimmed ();
    QListWidgetItem *firstVisible = nullptr;
    for (int i = 0; i < m_list->count (); i++)
      {
        QListWidgetItem *item = m_list->item (i);
        bool match = needle.isEmpty () || item->text ().contains (needle, Qt::CaseInsensitive) ||
                     item->data (Qt::UserRole).toString ().contains (needle, Qt::CaseInsensitive);
        item->setHidden (!match);
        if (match && !firstVisible)
          firstVisible = item;
      }
    if (!m_list->currentItem () || m_list->currentItem ()->isHidden ())
      m_list->setCurrentItem (firstVisible);
  }

  QString m_last;
  QStringList m_choices;
  QListWidget *m_list;
  QLineEdit *m_search;
  QPushButton *m_open;
  QPushButton *m_other;
  LimenQtAppChooserDone m_done;
  void *m_user_data;
};

} // namespace

extern "C" LIMEN_QT_EXPORT LimenQtDialog *
limen_qt_app_chooser_open (const LimenQtAppChooserSpec *spec, LimenQtAppChooserDone done, void *user_data)
{
  if (!LimenQt::ensureApplication ())
    return nullptr;
  auto *dialog = new AppChooserDialog (spec, done, user_data);
  dialog->present ();
  return dialog;
}

extern "C" LIMEN_QT_EXPORT void
limen_qt_app_chooser_update (LimenQtDialog *dialog, size_t n_choices, const char **choices)
{
  auto *d = dynamic_cast<AppChooserDialog *> (dialog);
  if (!d)
    return;
  QStringList ids;
  for (size_t i = 0; i < n_choices; i++)
    ids += str (choices[i]);
  d->setChoices (ids);
}
