/* Limen — the Access dialog: an app asks for something; the user allows or denies.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "shim-private.h"

#include <KLocalizedString>
#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QIcon>
#include <QLabel>
#include <QPushButton>
#include <QStyle>
#include <QVBoxLayout>

using LimenQt::str;

namespace {

class AccessDialog : public _LimenQtDialog
{
public:
  AccessDialog (const LimenQtAccessSpec *spec, LimenQtAccessDone done, void *user_data)
    : _LimenQtDialog (&spec->window), m_done (done), m_user_data (user_data)
  {
    setObjectName (QStringLiteral ("limen-access-dialog"));
    setWindowTitle (spec->app_title && *spec->app_title ? str (spec->app_title) : str (spec->title));
    auto *outer = new QHBoxLayout (this);
    auto *icon = new QLabel (this);
    int size = style ()->pixelMetric (QStyle::PM_MessageBoxIconSize) * 2;
    QIcon qicon = QIcon::fromTheme (str (spec->icon), QIcon::fromTheme (QStringLiteral ("dialog-question")));
    if (qicon.isNull ())
      qicon = style ()->standardIcon (QStyle::SP_MessageBoxQuestion);
    icon->setPixmap (qicon.pixmap (size, size));
    icon->setAlignment (Qt::AlignTop);
    outer->addWidget (icon);

    auto *col = new QVBoxLayout;
    outer->addLayout (col, 1);
    auto *title = new QLabel (LimenQt::breakable (str (spec->title)), this);
    title->setObjectName (QStringLiteral ("title"));
    QFont f = title->font ();
    f.setBold (true);
    f.setPointSizeF (f.pointSizeF () * 1.2);
    title->setFont (f);
    title->setWordWrap (true);
    title->setTextFormat (Qt::PlainText);
    col->addWidget (title);
    for (const char *text : { spec->subtitle, spec->body })
      {
        if (!text || !*text)
          continue;
        auto *label = new QLabel (LimenQt::breakable (str (text)), this);
        label->setObjectName (text == spec->subtitle ? QStringLiteral ("subtitle") : QStringLiteral ("body"));
        label->setWordWrap (true);
        label->setTextFormat (Qt::PlainText);
        col->addWidget (label);
      }
    if (spec->n_choices > 0)
      {
        m_choices = new LimenQt::ChoicesWidget (spec->n_choices, spec->choices, this);
        col->addWidget (m_choices);
      }
    col->addStretch ();
    auto *buttons = new QDialogButtonBox (this);
    m_grant = buttons->addButton (spec->grant_label && *spec->grant_label ? LimenQt::mnemonicLabel (spec->grant_label)
                                                                           : i18nc ("@action:button", "&Allow"),
                                  QDialogButtonBox::AcceptRole);
    m_deny = buttons->addButton (spec->deny_label && *spec->deny_label ? LimenQt::mnemonicLabel (spec->deny_label)
                                                                        : i18nc ("@action:button", "&Deny"),
                                 QDialogButtonBox::RejectRole);
    m_grant->setObjectName (QStringLiteral ("grant"));
    m_deny->setObjectName (QStringLiteral ("deny"));
    /* A stray Return must not grant anything. */
    m_grant->setAutoDefault (false);
    m_deny->setDefault (true);
    connect (buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect (buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    col->addWidget (buttons);
    setMinimumWidth (420);
  }

protected:
  void onFinished (bool accepted) override
  {
    QVector<QPair<QByteArray, QByteArray>> values;
    if (m_choices)
      values = m_choices->values ();
    QVector<LimenQtChoiceResult> results = LimenQt::choiceResults (values);
    complete ([&] {
      m_done (this, accepted ? LIMEN_QT_RESPONSE_OK : LIMEN_QT_RESPONSE_CANCELLED,
              size_t (results.size ()), results.data (), m_user_data);
    });
  }

private:
  LimenQt::ChoicesWidget *m_choices = nullptr;
  QPushButton *m_grant = nullptr;
  QPushButton *m_deny = nullptr;
  LimenQtAccessDone m_done;
  void *m_user_data;
};

} // namespace

extern "C" LIMEN_QT_EXPORT LimenQtDialog *
limen_qt_access_open (const LimenQtAccessSpec *spec, LimenQtAccessDone done, void *user_data)
{
  if (!LimenQt::ensureApplication ())
    return nullptr;
  auto *dialog = new AccessDialog (spec, done, user_data);
  dialog->adjustSize ();
  dialog->present ();
  return dialog;
}
