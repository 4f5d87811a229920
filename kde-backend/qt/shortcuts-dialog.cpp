/* Limen — the GlobalShortcuts dialog: an app proposes shortcuts; the person keeps, changes
 * or leaves out each one. The binding itself (KGlobalAccel) lives on the C side: this
 * dialog only reports the choice.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "shim-private.h"

#include <KGuiItem>
#include <KKeySequenceWidget>
#include <KLocalizedString>
#include <KStandardGuiItem>
#include <KStartupInfo>
#include <KWindowSystem>
#include <QDialogButtonBox>
#include <QGridLayout>
#include <QLabel>
#include <QLayout>
#include <QPushButton>
#include <QScrollArea>
#include <QVBoxLayout>
#include <QWindow>

using LimenQt::str;

namespace {

class ShortcutsDialog : public _LimenQtDialog
{
public:
  ShortcutsDialog (const LimenQtShortcutsSpec *spec, LimenQtShortcutsDone done, void *user_data)
    : _LimenQtDialog (&spec->window), m_done (done), m_user_data (user_data),
      m_token (spec->activation_token ? spec->activation_token : "")
  {
    setObjectName (QStringLiteral ("limen-shortcuts-dialog"));
    const QString app = LimenQt::breakable (str (spec->app_name));
    setWindowTitle (i18nc ("@title:window", "Global Shortcuts"));
    auto *col = new QVBoxLayout (this);

    auto *title = new QLabel (spec->configure ? i18nc ("@label", "Global shortcuts of %1", app)
                                              : i18nc ("@label", "%1 wants to use global shortcuts", app),
                              this);
    title->setObjectName (QStringLiteral ("title"));
    QFont f = title->font ();
    f.setBold (true);
    f.setPointSizeF (f.pointSizeF () * 1.2);
    title->setFont (f);
    title->setWordWrap (true);
    title->setTextFormat (Qt::PlainText);
    col->addWidget (title);
    auto *body = new QLabel (i18nc ("@info", "A global shortcut works everywhere, also while %1 is in the "
                                             "background. Keep the keys it proposes, press others, or leave a "
                                             "shortcut out. You can change them later in System Settings.",
                                    app),
                             this);
    body->setObjectName (QStringLiteral ("body"));
    body->setWordWrap (true);
    body->setTextFormat (Qt::PlainText);
    col->addWidget (body);

    col->addWidget (buildRows (spec));
    col->addStretch (1);

    auto *buttons = new QDialogButtonBox (this);
    m_accept = buttons->addButton (spec->configure ? i18nc ("@action:button", "&Save")
                                                   : i18nc ("@action:button", "&Allow"),
                                   QDialogButtonBox::AcceptRole);
    m_accept->setObjectName (QStringLiteral ("accept"));
    QPushButton *cancel = buttons->addButton (QDialogButtonBox::Cancel);
    /* KDE's own Cancel item: translated by KWidgetsAddons' catalog, with its icon. */
    KGuiItem::assign (cancel, KStandardGuiItem::cancel ());
    cancel->setObjectName (QStringLiteral ("cancel"));
    /* A Return typed into the app while the dialog appears must not bind keys. */
    m_accept->setAutoDefault (false);
    cancel->setDefault (true);
    connect (buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect (buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    col->addWidget (buttons);
    setMinimumWidth (520);
  }

  /* Hand the activation token to the window system, so the dialog may take the focus. */
  void applyActivationToken ()
  {
    if (m_token.isEmpty ())
      return;
    if (KWindowSystem::isPlatformX11 ())
      {
        setAttribute (Qt::WA_NativeWindow, true);
        winId ();
        KStartupInfo::setNewStartupId (windowHandle (), m_token);
      }
    else if (KWindowSystem::isPlatformWayland ())
      KWindowSystem::setCurrentXdgActivationToken (QString::fromUtf8 (m_token));
  }

  /* Start on the first shortcut, not on a button: the keyboard walks the list from there. */
  void focusFirstRow ()
  {
    if (!m_rows.isEmpty ())
      m_rows.first ().use->setFocus (Qt::ActiveWindowFocusReason);
  }

protected:
  void onFinished (bool accepted) override
  {
    QVector<QByteArray> keep;
    QVector<LimenQtShortcut> chosen;
    keep.reserve (m_rows.size ());
    for (const Row &row : m_rows)
      {
        const QKeySequence seq = row.keys->keySequence ();
        LimenQtShortcut s {};
        s.id = row.id.constData ();
        s.description = row.description.constData ();
        s.key = seq.isEmpty () ? 0 : seq[0];
        s.enabled = row.use->isChecked () ? 1 : 0;
        chosen.append (s);
      }
    complete ([&] {
      m_done (this, accepted ? LIMEN_QT_RESPONSE_OK : LIMEN_QT_RESPONSE_CANCELLED, size_t (chosen.size ()),
              chosen.data (), m_user_data);
    });
  }

private:
  struct Row
  {
    QByteArray id;
    QByteArray description;
    QCheckBox *use;
    KKeySequenceWidget *keys;
  };

  /* One row per shortcut: check box, its description (wrapped, never cut), its keys. */
  QWidget *buildRows (const LimenQtShortcutsSpec *spec)
  {
    auto *inner = new QWidget;
    auto *grid = new QGridLayout (inner);
    grid->setContentsMargins (0, 0, 0, 0);
    grid->setColumnStretch (1, 1);
    for (size_t i = 0; i < spec->n_shortcuts; i++)
      {
        const LimenQtShortcut &s = spec->shortcuts[i];
        const QString text = str (*s.description ? s.description : s.id);
        Row row { QByteArray (s.id), QByteArray (s.description), nullptr, nullptr };
        row.use = new QCheckBox (inner);
        row.use->setObjectName (QStringLiteral ("use-") + str (s.id));
        row.use->setChecked (s.enabled);
        row.use->setAccessibleName (text);
        row.use->setToolTip (LimenQt::plainToolTip (
          i18nc ("@info:tooltip", "Uncheck to leave this shortcut out: %1 will not get it", str (spec->app_name))));
        auto *label = new QLabel (LimenQt::breakable (text), inner);
        label->setTextFormat (Qt::PlainText);
        label->setWordWrap (true);
        label->setBuddy (row.use);
        row.keys = new KKeySequenceWidget (inner);
        row.keys->setObjectName (QStringLiteral ("keys-") + str (s.id));
        row.keys->setComponentName (str (spec->component));
        row.keys->setMultiKeyShortcutsAllowed (false);
        row.keys->setModifierlessAllowed (false);
        row.keys->setCheckForConflictsAgainst (KKeySequenceWidget::GlobalShortcuts |
                                               KKeySequenceWidget::StandardShortcuts);
        if (s.key)
          row.keys->setKeySequence (QKeySequence (s.key), KKeySequenceWidget::NoValidate);
        row.keys->setEnabled (s.enabled);
        connect (row.use, &QCheckBox::toggled, row.keys, &QWidget::setEnabled);
        grid->addWidget (row.use, int (i), 0, Qt::AlignVCenter);
        grid->addWidget (label, int (i), 1);
        grid->addWidget (row.keys, int (i), 2, Qt::AlignVCenter);
        m_rows.append (row);
      }
    if (spec->n_shortcuts <= 8)
      return inner;
    /* More than eight rows scroll, vertically only. */
    auto *area = new QScrollArea (this);
    area->setObjectName (QStringLiteral ("shortcuts"));
    area->setWidgetResizable (true);
    area->setFrameShape (QFrame::NoFrame);
    area->setHorizontalScrollBarPolicy (Qt::ScrollBarAlwaysOff);
    area->setWidget (inner);
    const int row_height = m_rows.first ().keys->sizeHint ().height () + grid->verticalSpacing ();
    area->setMinimumHeight (8 * row_height);
    return area;
  }

  QVector<Row> m_rows;
  QPushButton *m_accept = nullptr;
  LimenQtShortcutsDone m_done;
  void *m_user_data;
  QByteArray m_token;
};

} // namespace

extern "C" LIMEN_QT_EXPORT LimenQtDialog *
limen_qt_shortcuts_open (const LimenQtShortcutsSpec *spec, LimenQtShortcutsDone done, void *user_data)
{
  if (!LimenQt::ensureApplication ())
    return nullptr;
  auto *dialog = new ShortcutsDialog (spec, done, user_data);
  dialog->adjustSize ();
  /* adjustSize() sized the wrapped text for the narrower hint, before the minimum width:
   * height for the width the dialog really has. */
  if (dialog->layout ()->hasHeightForWidth ())
    dialog->resize (dialog->width (), dialog->layout ()->totalHeightForWidth (dialog->width ()));
  dialog->applyActivationToken ();
  dialog->present ();
  dialog->focusFirstRow ();
  return dialog;
}
