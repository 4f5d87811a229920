/* Drives the permissions page (kde-backend/kcm) as a person would, for
 * test_kcm_permissions.py: shows APP, saves a screenshot, then clicks through ACTIONS.
 *
 *   kcm-permissions-driver APP SHOT.png [revoke:TABLE:ID | value:TABLE:ID=VALUE | reset | shot:PATH
 *                                        | wait:TEXT | gone:TEXT]...
 *
 * Each action clicks the real widget (the combo's popup item, the button); the effect is
 * checked by the caller in the permission store. wait: and gone: click nothing: they wait
 * (for as long as the caller lets the driver run) until a label of the page shows TEXT, or
 * none does, as when someone else changes the store while the page is open. Exit status 1
 * when a widget is missing.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include <QAbstractItemView>
#include <QApplication>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QLabel>
#include <QListWidget>
#include <QTextDocument>
#include <QTextLayout>
#include <QPushButton>
#include <QTest>
#include <QTimer>

#include <KLocalizedString>

#include "permissions-page.h"

/* What a person reads of @text shown in @format: markup rendered, plain text as it is but
 * for the zero-width breaks the page puts into long words. */
static QString rendered (const QString &text, Qt::TextFormat format)
{
  if (format == Qt::PlainText || (format == Qt::AutoText && !Qt::mightBeRichText (text)))
    return QString (text).remove (QChar (0x200B));
  QTextDocument document;
  document.setHtml (text);
  return document.toPlainText ().remove (QChar (0x200B));
}

/* Does a line of plain @label's wrapped text run past its right edge? */
static bool overflows (QLabel *label)
{
  QTextLayout layout (label->text (), label->font ());
  QTextOption option;
  bool over = false;

  option.setWrapMode (QTextOption::WordWrap);
  layout.setTextOption (option);
  layout.beginLayout ();
  for (QTextLine line = layout.createLine (); line.isValid (); line = layout.createLine ())
    {
      line.setLineWidth (label->contentsRect ().width ());
      over = over || line.naturalTextWidth () > label->contentsRect ().width () + 1;
    }
  layout.endLayout ();
  return over;
}

/* Save what the page shows now, and print what its labels and the apps' tool tips read;
 * "overflow: NAME" for a wrapped label a line of which runs past its edge, "overflow: page"
 * when the page grew wider than the 900 pixels it was given. */
static bool save (QWidget *page, const QString &path)
{
  QApplication::processEvents ();
  if (page->width () > 900)
    printf ("overflow: page (%d pixels wide)\n", page->width ());
  for (QLabel *label : page->findChildren<QLabel *> ())
    if (label->isVisibleTo (page) && !label->text ().isEmpty ())
      {
        printf ("%s: %s\n", qPrintable (label->objectName ()), qPrintable (rendered (label->text (), label->textFormat ())));
        if (label->wordWrap () && label->textFormat () == Qt::PlainText && overflows (label))
          printf ("overflow: %s\n", qPrintable (label->objectName ()));
      }
  if (auto *apps = page->findChild<QListWidget *> ())
    for (int i = 0; i < apps->count (); i++)
      printf ("tooltip: %s\n", qPrintable (rendered (apps->item (i)->toolTip (), Qt::AutoText)));
  printf ("--\n");
  fflush (stdout);
  return page->grab ().save (path);
}

/* Answer the confirmation KMessageBox of "Reset this app" with its Continue button. */
static void acceptNextDialog ()
{
  QTimer::singleShot (50, [] {
    QWidget *modal = QApplication::activeModalWidget ();
    if (!modal)
      return acceptNextDialog ();
    for (QLabel *label : modal->findChildren<QLabel *> ())
      if (!label->text ().isEmpty ())
        printf ("confirm: %s\n", qPrintable (rendered (label->text (), label->textFormat ())));
    fflush (stdout);
    auto *box = modal->findChild<QDialogButtonBox *> ();
    if (box && box->button (QDialogButtonBox::Yes))
      QTest::mouseClick (box->button (QDialogButtonBox::Yes), Qt::LeftButton);
  });
}

static bool chooseInCombo (QComboBox *combo, const QString &value)
{
  const int index = combo->findData (value);
  if (index < 0)
    return false;
  combo->showPopup ();
  QAbstractItemView *view = combo->view ();
  const QRect rect = view->visualRect (view->model ()->index (index, 0));
  QTest::mouseClick (view->viewport (), Qt::LeftButton, {}, rect.center ());
  return true;
}

static bool shows (QWidget *page, const QString &text)
{
  for (QLabel *label : page->findChildren<QLabel *> ())
    if (label->isVisibleTo (page) && label->text ().contains (text))
      return true;
  return false;
}

static bool act (QWidget *page, const QString &action)
{
  if (action.startsWith (QLatin1String ("wait:")) || action.startsWith (QLatin1String ("gone:")))
    {
      const bool present = action.startsWith (QLatin1String ("wait:"));
      while (shows (page, action.mid (5)) != present)
        QApplication::processEvents (QEventLoop::WaitForMoreEvents);
      return true;
    }
  if (action.startsWith (QLatin1String ("shot:")))
    return save (page, action.mid (5));
  if (action == QLatin1String ("reset"))
    {
      acceptNextDialog ();
      QTest::mouseClick (page->findChild<QPushButton *> (QStringLiteral ("reset")), Qt::LeftButton);
      return true;
    }
  if (action.startsWith (QLatin1String ("revoke:")))
    {
      auto *button = page->findChild<QPushButton *> (action);
      if (!button)
        return false;
      QTest::mouseClick (button, Qt::LeftButton);
      return true;
    }
  if (action.startsWith (QLatin1String ("value:")))
    {
      const int eq = action.lastIndexOf (QLatin1Char ('='));
      auto *combo = page->findChild<QComboBox *> (action.left (eq));
      return combo && chooseInCombo (combo, action.mid (eq + 1));
    }
  return false;
}

int main (int argc, char **argv)
{
  QApplication app (argc, argv);
  KLocalizedString::setApplicationDomain ("limen");
  if (qEnvironmentVariableIsSet ("LIMEN_LOCALEDIR"))
    KLocalizedString::addDomainLocaleDir ("limen", qEnvironmentVariable ("LIMEN_LOCALEDIR"));
  const QStringList args = app.arguments ();
  if (args.size () < 3)
    return 2;

  LimenPermissionsPage page;
  page.resize (900, 620);
  page.show ();
  page.reload ();
  if (!page.selectApp (args[1] == QLatin1String ("-") ? QString () : args[1]))
    {
      qWarning ("app %s not listed", qPrintable (args[1]));
      return 1;
    }
  if (!save (&page, args[2]))
    return 1;
  for (int i = 3; i < args.size (); i++)
    {
      if (!act (&page, args[i]))
        {
          qWarning ("action %s: no such widget", qPrintable (args[i]));
          return 1;
        }
      /* The page reads the store again once the click's handler has returned. */
      QApplication::processEvents ();
    }
  return 0;
}
