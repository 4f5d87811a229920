/* Limen — the Account dialog: the user sees what an app asks to learn (name, picture)
 * and why, may edit the name, and shares or declines.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "shim-private.h"

#include <KLocalizedString>
#include <KStandardGuiItem>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QIcon>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

using LimenQt::str;

namespace {

class AccountDialog : public _LimenQtDialog
{
public:
  AccountDialog (const LimenQtAccountSpec *spec, LimenQtAccountDone done, void *user_data)
    : _LimenQtDialog (&spec->window), m_image (str (spec->image_path)), m_done (done), m_user_data (user_data)
  {
    setObjectName (QStringLiteral ("limen-account-dialog"));
    setWindowTitle (i18nc ("@title:window", "Share Your Information"));
    auto *layout = new QVBoxLayout (this);
    auto *intro = new QLabel (i18n ("An application asks for your name and picture."), this);
    intro->setWordWrap (true);
    layout->addWidget (intro);
    if (spec->reason && *spec->reason)
      {
        auto *reason = new QLabel (i18nc ("the reason an app gives", "Reason given: %1", LimenQt::breakable (str (spec->reason))), this);
        reason->setObjectName (QStringLiteral ("reason"));
        reason->setWordWrap (true);
        reason->setTextFormat (Qt::PlainText);
        layout->addWidget (reason);
      }
    auto *form = new QFormLayout;
    auto *picture = new QLabel (this);
    QPixmap pix (m_image);
    if (pix.isNull ())
      pix = QIcon::fromTheme (QStringLiteral ("user-identity")).pixmap (64, 64);
    else
      pix = pix.scaled (64, 64, Qt::KeepAspectRatio, Qt::SmoothTransformation);
    picture->setPixmap (pix);
    form->addRow (i18nc ("@label", "Picture:"), picture);
    m_name = new QLineEdit (str (spec->real_name), this);
    m_name->setObjectName (QStringLiteral ("name"));
    form->addRow (i18nc ("@label:textbox", "Name:"), m_name);
    form->addRow (i18nc ("@label", "User name:"), new QLabel (str (spec->user_name), this));
    layout->addLayout (form);
    auto *buttons = new QDialogButtonBox (this);
    auto *share = buttons->addButton (i18nc ("@action:button", "&Share"), QDialogButtonBox::AcceptRole);
    share->setObjectName (QStringLiteral ("share"));
    /* KDE's own Cancel item: translated by KWidgetsAddons' catalog, with its icon. */
    KGuiItem::assign (buttons->addButton (QDialogButtonBox::Cancel), KStandardGuiItem::cancel ());
    connect (buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect (buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget (buttons);
    setMinimumWidth (400);
  }

protected:
  void onFinished (bool accepted) override
  {
    QByteArray name = m_name->text ().toUtf8 ();
    QByteArray image = m_image.toUtf8 ();
    complete ([&] {
      m_done (this, accepted ? LIMEN_QT_RESPONSE_OK : LIMEN_QT_RESPONSE_CANCELLED, name.constData (),
              image.constData (), m_user_data);
    });
  }

private:
  QString m_image;
  QLineEdit *m_name;
  LimenQtAccountDone m_done;
  void *m_user_data;
};

} // namespace

extern "C" LIMEN_QT_EXPORT LimenQtDialog *
limen_qt_account_open (const LimenQtAccountSpec *spec, LimenQtAccountDone done, void *user_data)
{
  if (!LimenQt::ensureApplication ())
    return nullptr;
  auto *dialog = new AccountDialog (spec, done, user_data);
  dialog->adjustSize ();
  dialog->present ();
  return dialog;
}
