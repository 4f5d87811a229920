/* Limen — QTest (offscreen) of liblimen-qt: portal options → widgets → results, for
 * each dialog, through the shim's C entry points.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "file-dialog.h"
#include "limen-qt.h"

#include <KFileFilterCombo>
#include <KFileWidget>
#include <KUrlComboBox>
#include <KUrlNavigator>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QStandardPaths>
#include <QScreen>
#include <QTemporaryDir>
#include <QTest>
#include <QTextLayout>

namespace {

struct FileResult
{
  int calls = 0;
  int response = -1;
  QStringList uris;
  int filter = -2;
  QMap<QString, QString> choices;
};

void fileDone (LimenQtDialog *, int response, const LimenQtFileChooserResult *r, void *data)
{
  auto *out = static_cast<FileResult *> (data);
  out->calls++;
  out->response = response;
  if (r)
    {
      for (size_t i = 0; i < r->n_uris; i++)
        out->uris += QString::fromUtf8 (r->uris[i]);
      out->filter = r->filter;
      for (size_t i = 0; i < r->n_choices; i++)
        out->choices[QString::fromUtf8 (r->choices[i].id)] = QString::fromUtf8 (r->choices[i].value);
    }
}

struct AccessResult
{
  int calls = 0;
  int response = -1;
  QMap<QString, QString> choices;
};

void accessDone (LimenQtDialog *, int response, size_t n, const LimenQtChoiceResult *c, void *data)
{
  auto *out = static_cast<AccessResult *> (data);
  out->calls++;
  out->response = response;
  for (size_t i = 0; i < n; i++)
    out->choices[QString::fromUtf8 (c[i].id)] = QString::fromUtf8 (c[i].value);
}

struct StringResult
{
  int calls = 0;
  int response = -1;
  QString value, value2;
};

void chooserDone (LimenQtDialog *, int response, const char *choice, void *data)
{
  auto *out = static_cast<StringResult *> (data);
  out->calls++;
  out->response = response;
  out->value = QString::fromUtf8 (choice);
}

void accountDone (LimenQtDialog *, int response, const char *name, const char *image, void *data)
{
  auto *out = static_cast<StringResult *> (data);
  out->calls++;
  out->response = response;
  out->value = QString::fromUtf8 (name);
  out->value2 = QString::fromUtf8 (image);
}

const char *encIds[] = { "utf8", "latin1" };
const char *encLabels[] = { "UTF-8", "Latin-1" };
const LimenQtChoice twoChoices[] = {
  { "enc", "_Encoding", 2, encIds, encLabels, "latin1" },
  { "ro", "Read _only", 0, nullptr, nullptr, "true" },
};

QString artifacts ()
{
  QString dir = QString::fromUtf8 (qgetenv ("LIMEN_ARTIFACTS"));
  if (dir.isEmpty ())
    return QString ();
  QDir ().mkpath (dir);
  return dir;
}

void grab (QWidget *w, const char *name)
{
  QString dir = artifacts ();
  if (!dir.isEmpty ())
    w->grab ().save (dir + QLatin1Char ('/') + QLatin1String (name));
}

} // namespace

class TestKdeShim : public QObject
{
  Q_OBJECT

private:
  QTemporaryDir m_tmp;
  QString m_state;

private Q_SLOTS:
  void initTestCase ()
  {
    QStandardPaths::setTestModeEnabled (true);
    QVERIFY (m_tmp.isValid ());
    m_state = m_tmp.filePath (QStringLiteral ("state.rc"));
    QFile f (m_tmp.filePath (QStringLiteral ("notes.txt")));
    QVERIFY (f.open (QIODevice::WriteOnly));
    f.write ("x");
  }

  void filterLine ()
  {
    LimenQtFilterPattern p[] = { { 0, "*.txt" }, { 1, "image/png" } };
    LimenQtFilter f = { "Text / pictures", 2, p };
    QString line = LimenFileDialog::filterLine (f);
    QVERIFY (line.startsWith (QLatin1String ("*.txt *.png|")));
    QVERIFY (line.endsWith (QLatin1String ("Text \\/ pictures")));
    LimenQtFilterPattern none[] = { { 1, "no/such-type" } };
    LimenQtFilter g = { "Nothing", 1, none };
    QCOMPARE (LimenFileDialog::filterLine (g), QStringLiteral ("*|Nothing"));
  }

  void openFileMapping ()
  {
    LimenQtFilterPattern text[] = { { 0, "*.txt" } };
    LimenQtFilterPattern img[] = { { 1, "image/png" } };
    LimenQtFilter filters[] = { { "Text", 1, text }, { "Images", 1, img } };
    QByteArray folder = m_tmp.path ().toUtf8 ();
    LimenQtFileChooserSpec spec {};
    spec.window = { "", "org.example.App", 1 };
    spec.mode = LIMEN_QT_FILE_OPEN;
    spec.title = "Pick one";
    spec.accept_label = "_Take it";
    spec.multiple = 1;
    spec.n_filters = 2;
    spec.filters = filters;
    spec.current_filter = 1;
    spec.n_choices = 2;
    spec.choices = twoChoices;
    spec.current_folder = folder.constData ();
    QByteArray state = m_state.toUtf8 ();
    spec.state_file = state.constData ();

    FileResult result;
    auto *dialog = static_cast<LimenFileDialog *> (limen_qt_file_chooser_open (&spec, fileDone, &result));
    QVERIFY (dialog);
    QCOMPARE (dialog->windowTitle (), QStringLiteral ("Pick one"));
    QTRY_VERIFY (dialog->fileWidget ());
    KFileWidget *w = dialog->fileWidget ();
    QCOMPARE (w->operationMode (), KFileWidget::Opening);
    QVERIFY (w->mode () & KFile::Files);
    QCOMPARE (w->okButton ()->text (), QStringLiteral ("&Take it"));
    QCOMPARE (w->filterWidget ()->count (), 2);
    QCOMPARE (w->filterWidget ()->currentIndex (), 1);
    QCOMPARE (w->baseUrl ().toLocalFile ().chopped (w->baseUrl ().toLocalFile ().endsWith (QLatin1Char ('/')) ? 1 : 0),
              m_tmp.path ());
    auto *combo = dialog->findChild<QComboBox *> (QStringLiteral ("choice-enc"));
    auto *box = dialog->findChild<QCheckBox *> (QStringLiteral ("choice-ro"));
    QVERIFY (combo && box);
    QCOMPARE (combo->currentData ().toByteArray (), QByteArray ("latin1"));
    QVERIFY (box->isChecked ());
    grab (dialog, "qtest-open-file.png");

    combo->setCurrentIndex (0);
    box->setChecked (false);
    w->filterWidget ()->setCurrentIndex (0);
    w->locationEdit ()->setEditText (QStringLiteral ("notes.txt"));
    w->okButton ()->click ();
    QTRY_COMPARE (result.calls, 1);
    QCOMPARE (result.response, int (LIMEN_QT_RESPONSE_OK));
    QCOMPARE (result.uris, QStringList { QUrl::fromLocalFile (m_tmp.filePath (QStringLiteral ("notes.txt"))).toString () });
    QCOMPARE (result.filter, 0);
    QCOMPARE (result.choices.value (QStringLiteral ("enc")), QStringLiteral ("utf8"));
    QCOMPARE (result.choices.value (QStringLiteral ("ro")), QStringLiteral ("false"));
    /* The folder and size are remembered in our own file. */
    QTRY_VERIFY (QFile::exists (m_state));
  }

  /* A save dialog for "draft.odt"; the caller adds the state file (and the folder). */
  static LimenQtFileChooserSpec draftSaveSpec ()
  {
    LimenQtFileChooserSpec spec {};
    spec.window = { "", "", 0 };
    spec.mode = LIMEN_QT_FILE_SAVE;
    spec.title = "Save it";
    spec.current_name = "draft.odt";
    spec.current_filter = -1;
    return spec;
  }

  void saveFileMapping ()
  {
    LimenQtFileChooserSpec spec = draftSaveSpec ();
    QByteArray state = m_state.toUtf8 ();
    spec.state_file = state.constData ();
    FileResult result;
    auto *dialog = static_cast<LimenFileDialog *> (limen_qt_file_chooser_open (&spec, fileDone, &result));
    QTRY_VERIFY (dialog->fileWidget ());
    KFileWidget *w = dialog->fileWidget ();
    QCOMPARE (w->operationMode (), KFileWidget::Saving);
    QCOMPARE (w->locationEdit ()->currentText (), QStringLiteral ("draft.odt"));
    /* Last folder from the previous test. */
    QCOMPARE (QDir (w->baseUrl ().toLocalFile ()).absolutePath (), m_tmp.path ());
    QVERIFY (!w->filterWidget ()->isVisible ());
    w->okButton ()->click ();
    QTRY_COMPARE (result.calls, 1);
    QCOMPARE (result.response, int (LIMEN_QT_RESPONSE_OK));
    QCOMPARE (result.uris, QStringList { QUrl::fromLocalFile (m_tmp.filePath (QStringLiteral ("draft.odt"))).toString () });
    QCOMPARE (result.filter, -1);
  }

  /* Laid out as KDE's own file dialog: OK and Cancel side by side in one button box, and
   * in a folder that is a place, a breadcrumb without the protocol list. */
  void saveFileLayout ()
  {
    LimenQtFileChooserSpec spec = draftSaveSpec ();
    QByteArray home = QDir::homePath ().toUtf8 ();
    spec.current_folder = home.constData ();
    /* A first dialog: no folders remembered yet. */
    QByteArray state = m_tmp.filePath (QStringLiteral ("layout-state")).toUtf8 ();
    spec.state_file = state.constData ();
    FileResult result;
    auto *dialog = static_cast<LimenFileDialog *> (limen_qt_file_chooser_open (&spec, fileDone, &result));
    QTRY_VERIFY (dialog->fileWidget ());
    KFileWidget *w = dialog->fileWidget ();
    QTest::qWait (200);
    auto *box = qobject_cast<QDialogButtonBox *> (w->okButton ()->parentWidget ());
    QVERIFY (box != nullptr);
    QCOMPARE (w->cancelButton ()->parentWidget (), box);
    QCOMPARE (w->okButton ()->y (), w->cancelButton ()->y ());
    auto *navigator = w->findChild<KUrlNavigator *> ();
    QVERIFY (navigator != nullptr);
    int protocolLists = 0;
    for (QWidget *child : navigator->findChildren<QWidget *> ())
      if (child->inherits ("KDEPrivate::KUrlNavigatorProtocolCombo"))
        {
          protocolLists++;
          QVERIFY (!child->isVisible ());
        }
    QCOMPARE (protocolLists, 1);
    w->cancelButton ()->click ();
    QTRY_COMPARE (result.calls, 1);
    QCOMPARE (result.response, int (LIMEN_QT_RESPONSE_CANCELLED));
  }

  void saveFilesAndCancelAndClose ()
  {
    const char *names[] = { "a.txt", "b.txt" };
    QByteArray folder = m_tmp.path ().toUtf8 ();
    QByteArray state = m_state.toUtf8 ();
    LimenQtFileChooserSpec spec {};
    spec.window = { "", "", 0 };
    spec.mode = LIMEN_QT_FILE_SAVE_FILES;
    spec.title = "Save all";
    spec.n_files = 2;
    spec.files = names;
    spec.current_folder = folder.constData ();
    spec.current_filter = -1;
    spec.state_file = state.constData ();
    FileResult result;
    auto *dialog = static_cast<LimenFileDialog *> (limen_qt_file_chooser_open (&spec, fileDone, &result));
    QTRY_VERIFY (dialog->fileWidget ());
    QVERIFY (dialog->fileWidget ()->mode () & KFile::Directory);
    dialog->fileWidget ()->okButton ()->click ();
    QTRY_COMPARE (result.calls, 1);
    QCOMPARE (result.uris.size (), 2);
    QVERIFY (result.uris[1].endsWith (QLatin1String ("/b.txt")));

    FileResult cancelled;
    dialog = static_cast<LimenFileDialog *> (limen_qt_file_chooser_open (&spec, fileDone, &cancelled));
    QTRY_VERIFY (dialog->fileWidget ());
    dialog->fileWidget ()->cancelButton ()->click ();
    QTRY_COMPARE (cancelled.calls, 1);
    QCOMPARE (cancelled.response, int (LIMEN_QT_RESPONSE_CANCELLED));

    /* Close before the widget is even built, and after: no callback ever. */
    FileResult closed;
    QPointer<LimenFileDialog> d1 = static_cast<LimenFileDialog *> (limen_qt_file_chooser_open (&spec, fileDone, &closed));
    limen_qt_close (d1);
    QPointer<LimenFileDialog> d2 = static_cast<LimenFileDialog *> (limen_qt_file_chooser_open (&spec, fileDone, &closed));
    QTRY_VERIFY (d2->fileWidget ());
    limen_qt_close (d2);
    QTRY_VERIFY (d1.isNull () && d2.isNull ());
    QTest::qWait (50);
    QCOMPARE (closed.calls, 0);
  }

  void accessMapping ()
  {
    LimenQtAccessSpec spec {};
    spec.window = { "", "", 1 };
    spec.title = "Allow recording?";
    spec.subtitle = "Example wants the microphone";
    spec.body = "Body text";
    spec.grant_label = "_Record";
    spec.deny_label = nullptr;
    spec.icon = "audio-input-microphone";
    spec.n_choices = 2;
    spec.choices = twoChoices;
    AccessResult result;
    LimenQtDialog *dialog = limen_qt_access_open (&spec, accessDone, &result);
    QVERIFY (dialog);
    QCOMPARE (dialog->findChild<QLabel *> (QStringLiteral ("title"))->text (), QStringLiteral ("Allow recording?"));
    QCOMPARE (dialog->findChild<QLabel *> (QStringLiteral ("subtitle"))->text (), QStringLiteral ("Example wants the microphone"));
    QCOMPARE (dialog->findChild<QLabel *> (QStringLiteral ("body"))->text (), QStringLiteral ("Body text"));
    auto *grant = dialog->findChild<QPushButton *> (QStringLiteral ("grant"));
    auto *deny = dialog->findChild<QPushButton *> (QStringLiteral ("deny"));
    QCOMPARE (grant->text (), QStringLiteral ("&Record"));
    QVERIFY (deny->isDefault ());
    QVERIFY (!grant->isDefault ());
    grab (dialog, "qtest-access.png");
    dialog->findChild<QCheckBox *> (QStringLiteral ("choice-ro"))->setChecked (false);
    grant->click ();
    QTRY_COMPARE (result.calls, 1);
    QCOMPARE (result.response, 0);
    QCOMPARE (result.choices.value (QStringLiteral ("ro")), QStringLiteral ("false"));
    QCOMPARE (result.choices.value (QStringLiteral ("enc")), QStringLiteral ("latin1"));

    AccessResult denied;
    dialog = limen_qt_access_open (&spec, accessDone, &denied);
    dialog->findChild<QPushButton *> (QStringLiteral ("deny"))->click ();
    QTRY_COMPARE (denied.calls, 1);
    QCOMPARE (denied.response, 1);
  }

  void appChooserMapping ()
  {
    const char *ids[] = { "org.example.One", "org.example.Two", "org.example.Three" };
    LimenQtAppChooserSpec spec {};
    spec.window = { "", "", 1 };
    spec.content_type = "text/plain";
    spec.uri = "file:///tmp/x.txt";
    spec.last_choice = "org.example.Three";
    spec.n_choices = 3;
    spec.choices = ids;
    StringResult result;
    LimenQtDialog *dialog = limen_qt_app_chooser_open (&spec, chooserDone, &result);
    auto *list = dialog->findChild<QListWidget *> (QStringLiteral ("choices"));
    QCOMPARE (list->count (), 3);
    /* The last choice comes first and is selected. */
    QCOMPARE (list->item (0)->data (Qt::UserRole).toString (), QStringLiteral ("org.example.Three"));
    QCOMPARE (list->currentRow (), 0);
    const char *update[] = { "org.example.One", "org.example.Four" };
    limen_qt_app_chooser_update (dialog, 2, update);
    QCOMPARE (list->count (), 2);
    list->setCurrentRow (1);
    grab (dialog, "qtest-app-chooser.png");
    dialog->findChild<QPushButton *> (QStringLiteral ("open"))->click ();
    QTRY_COMPARE (result.calls, 1);
    QCOMPARE (result.response, 0);
    QCOMPARE (result.value, QStringLiteral ("org.example.Four"));
  }

  void appChooserSearch ()
  {
    const char *ids[] = { "org.example.One", "org.example.Two" };
    LimenQtAppChooserSpec spec {};
    spec.window = { "", "", 1 };
    spec.content_type = "";
    spec.uri = "";
    spec.last_choice = "";
    spec.n_choices = 2;
    spec.choices = ids;
    StringResult result;
    LimenQtDialog *dialog = limen_qt_app_chooser_open (&spec, chooserDone, &result);
    auto *list = dialog->findChild<QListWidget *> (QStringLiteral ("choices"));
    auto *search = dialog->findChild<QLineEdit *> (QStringLiteral ("search"));
    QVERIFY (search->isHidden ());
    dialog->findChild<QPushButton *> (QStringLiteral ("other"))->click ();
    QVERIFY (!search->isHidden ());
    /* The offered handlers stay first; every other application follows. */
    QVERIFY (list->count () >= 2);
    QCOMPARE (list->item (0)->data (Qt::UserRole).toString (), QStringLiteral ("org.example.One"));
    search->setText (QStringLiteral ("example.two"));
    int visible = 0;
    for (int i = 0; i < list->count (); i++)
      visible += list->item (i)->isHidden () ? 0 : 1;
    QCOMPARE (visible, 1);
    QCOMPARE (list->currentItem ()->data (Qt::UserRole).toString (), QStringLiteral ("org.example.Two"));
    search->setText (QStringLiteral ("no-such-application-anywhere"));
    QVERIFY (!list->currentItem () || list->currentItem ()->isHidden ());
    limen_qt_close (dialog);
    QTest::qWait (20);
    QCOMPARE (result.calls, 0);
  }

  void accountMapping ()
  {
    LimenQtAccountSpec spec {};
    spec.window = { "", "", 1 };
    spec.reason = "To sign posts";
    spec.user_name = "jdoe";
    spec.real_name = "Jane Doe";
    spec.image_path = "";
    StringResult result;
    LimenQtDialog *dialog = limen_qt_account_open (&spec, accountDone, &result);
    QVERIFY (dialog->findChild<QLabel *> (QStringLiteral ("reason"))->text ().contains (QLatin1String ("To sign posts")));
    auto *name = dialog->findChild<QLineEdit *> (QStringLiteral ("name"));
    QCOMPARE (name->text (), QStringLiteral ("Jane Doe"));
    name->setText (QStringLiteral ("J. Doe"));
    grab (dialog, "qtest-account.png");
    dialog->findChild<QPushButton *> (QStringLiteral ("share"))->click ();
    QTRY_COMPARE (result.calls, 1);
    QCOMPARE (result.response, 0);
    QCOMPARE (result.value, QStringLiteral ("J. Doe"));
  }

  void breakable ()
  {
    const QChar zwsp (0x200B);
    QCOMPARE (LimenQt::breakable (QStringLiteral ("Allow recording?")), QStringLiteral ("Allow recording?"));
    const QString word (80, QLatin1Char ('W'));
    const QString broken = LimenQt::breakable (word);
    QCOMPARE (QString (broken).remove (zwsp), word);
    for (const QString &piece : broken.split (zwsp))
      QVERIFY (piece.size () <= 12);
    const QString german = QStringLiteral ("Hintergrundaktivitätsberechtigungen");   /* 35 letters */
    QCOMPARE (LimenQt::breakable (german.left (30) + QStringLiteral (" und ") + german.left (30)),
              german.left (30) + QStringLiteral (" und ") + german.left (30));
    /* Never between a letter and its accent, nor inside a mnemonic or an escaped '&'. */
    const QString accented = QString (QStringLiteral ("e\u0301")).repeated (40);
    QVERIFY (!LimenQt::breakable (accented).contains (QString (zwsp) + QChar (0x0301)));
    QCOMPARE (LimenQt::breakable (accented).remove (zwsp), accented);
    const QString mnemonic = LimenQt::mnemonicLabel ((QByteArray (23, 'a') + "_b" + QByteArray (30, 'c')).constData ());
    QVERIFY (LimenQt::breakable (mnemonic).contains (QStringLiteral ("&b")));
    const QString amps = QString (QStringLiteral ("a&&")).repeated (20);
    QVERIFY (!LimenQt::breakable (amps).contains (QStringLiteral ("&") + zwsp));
  }

  /* An app's words with no place to break a line (a title of one 80-letter word, a long
   * address, long choice labels) wrap inside their labels: every laid-out line fits its
   * label's width, and all of them its height. */
  void longWordsWrap ()
  {
    const QByteArray word (80, 'W'), address = "https://example.org/" + QByteArray (200, 'a');
    const char *ids[] = { "a", "b" }, *labels[] = { "A", "B" };
    const QByteArray choiceLabel (50, 'C'), sentence = QByteArray ("Keep a copy of every recording ").repeated (5);
    const LimenQtChoice choices[] = { { "long", choiceLabel.constData (), 2, ids, labels, "a" },
                                      { "keep", sentence.constData (), 0, nullptr, nullptr, "false" },
                                      { "enc", "Encoding", 2, ids, labels, "b" } };
    LimenQtAccessSpec spec {};
    spec.window = { "", "", 1 };
    spec.title = word.constData ();
    spec.subtitle = address.constData ();
    spec.n_choices = 3;
    spec.choices = choices;
    AccessResult result;
    LimenQtDialog *dialog = limen_qt_access_open (&spec, accessDone, &result);
    QVERIFY (dialog);
    QTRY_VERIFY (dialog->isVisible ());
    QTest::qWait (100);
    grab (dialog, "qtest-access-long-words.png");
    QVERIFY (dialog->width () <= dialog->screen ()->availableGeometry ().width ());
    /* As high as the wrapped text needs (Qt's own first size is 2/3 of the screen at most). */
    QVERIFY (dialog->height () >= dialog->heightForWidth (dialog->width ()));
    const auto found = dialog->findChildren<QLabel *> ();
    int checked = 0;
    for (QLabel *label : found)
      {
        if (!label->wordWrap () || label->text ().isEmpty ())
          continue;
        QString shown = label->text ();
        if (label->buddy ())   /* the mnemonic's '&' is not drawn */
          shown.replace (QStringLiteral ("&&"), QStringLiteral ("\x01")).remove (QLatin1Char ('&')).replace (QLatin1Char ('\x01'), QLatin1Char ('&'));
        QTextLayout layout (shown, label->font ());
        QTextOption option;
        option.setWrapMode (QTextOption::WordWrap);
        layout.setTextOption (option);
        const int width = label->contentsRect ().width ();
        int height = 0, lines = 0;
        layout.beginLayout ();
        for (QTextLine line = layout.createLine (); line.isValid (); line = layout.createLine ())
          {
            line.setLineWidth (width);
            height += label->fontMetrics ().height ();
            lines++;
            QVERIFY2 (line.naturalTextWidth () <= width + 1,
                      qPrintable (QStringLiteral ("%1: a line of %2 px in %3").arg (label->text ().left (20))
                                    .arg (line.naturalTextWidth ()).arg (width)));
          }
        layout.endLayout ();
        /* A pixel a line for rounding: a clipped label lacks whole lines. */
        QVERIFY2 (height <= label->contentsRect ().height () + lines,
                  qPrintable (QStringLiteral ("%1: %2 px of lines in %3").arg (label->text ().left (20))
                                .arg (height).arg (label->contentsRect ().height ())));
        checked++;
      }
    /* Title, subtitle, the long labels of a combo box and a check box, "Encoding". */
    QCOMPARE (checked, 5);
    /* A click on the long check box label toggles its box. */
    auto *keep = dialog->findChild<QCheckBox *> (QStringLiteral ("choice-keep"));
    QVERIFY (keep && keep->text ().isEmpty () && !keep->isChecked ());
    QLabel *keepLabel = nullptr;
    for (QLabel *label : found)
      if (label->buddy () == keep)
        keepLabel = label;
    QVERIFY (keepLabel);
    QTest::mouseClick (keepLabel, Qt::LeftButton);
    QVERIFY (keep->isChecked ());
    dialog->findChild<QPushButton *> (QStringLiteral ("grant"))->click ();
    QTRY_COMPARE (result.calls, 1);
    QCOMPARE (result.choices.value (QStringLiteral ("keep")), QStringLiteral ("true"));
    QCOMPARE (result.choices.value (QStringLiteral ("enc")), QStringLiteral ("b"));
  }

  void mnemonics ()
  {
    QCOMPARE (LimenQt::mnemonicLabel ("_Open"), QStringLiteral ("&Open"));
    QCOMPARE (LimenQt::mnemonicLabel ("Fish & Chips"), QStringLiteral ("Fish && Chips"));
    QCOMPARE (LimenQt::mnemonicLabel ("a__b"), QStringLiteral ("a_b"));
  }
};

QTEST_MAIN (TestKdeShim)
#include "test-kde-shim.moc"
