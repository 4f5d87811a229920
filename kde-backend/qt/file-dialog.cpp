/* Limen — the FileChooser dialog: KFileWidget (places, previews, filters) in a dialog,
 * with the portal's choices below it.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#include "file-dialog.h"
#include "remote-files.h"

#include <KConfig>
#include <KConfigGroup>
#include <KDirLister>
#include <KDirOperator>
#include <KFileFilterCombo>
#include <KFilePlacesModel>
#include <KFilePlacesView>
#include <KFileWidget>
#include <KIO/StatJob>
#include <KLocalizedString>
#include <KMessageBox>
#include <KProtocolInfo>
#include <KRecentDocument>
#include <KUrlComboBox>
#include <KUrlNavigator>
#include <QAbstractItemView>
#include <QDir>
#include <QFileInfo>
#include <QItemSelectionModel>
#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QLabel>
#include <QLoggingCategory>
#include <QLineEdit>
#include <QMimeDatabase>
#include <QPushButton>
#include <QTimer>
#include <QVBoxLayout>
#include <memory>

using LimenQt::str;

/* QT_LOGGING_RULES=limen.shim.debug=true: the benchmark times when the widget is ready. */
Q_LOGGING_CATEGORY (LIMEN_SHIM, "limen.shim", QtWarningMsg)

QString LimenFileDialog::filterLine (const LimenQtFilter &filter)
{
  QStringList patterns;
  QMimeDatabase db;
  for (size_t i = 0; i < filter.n_patterns; i++)
    {
      const LimenQtFilterPattern &p = filter.patterns[i];
      if (p.is_mime)
        {
          QMimeType mt = db.mimeTypeForName (str (p.pattern));
          if (mt.isValid ())
            patterns += mt.globPatterns ();
        }
      else
        patterns += str (p.pattern);
    }
  if (patterns.isEmpty ())
    patterns += QStringLiteral ("*");
  QString name = str (filter.name);
  name.replace (QLatin1Char ('|'), QLatin1Char (' ')).replace (QLatin1Char ('\n'), QLatin1Char (' '));
  /* KFileWidget splits filters at '/' unless escaped. */
  name.replace (QLatin1Char ('/'), QStringLiteral ("\\/"));
  for (QString &p : patterns)
    p.replace (QLatin1Char (' '), QString ()).replace (QLatin1Char ('|'), QString ());
  return patterns.join (QLatin1Char (' ')) + QLatin1Char ('|') + name;
}

LimenFileDialog::LimenFileDialog (const LimenQtFileChooserSpec *spec, LimenQtFileChooserDone done,
                                  void *user_data)
  : _LimenQtDialog (&spec->window), m_mode (spec->mode), m_done (done), m_user_data (user_data)
{
  /* Everything is copied out of @spec now: the widget itself is built after the window
   * is mapped (build()), when the spec is long gone. */
  m_state_file = str (spec->state_file);
  for (size_t i = 0; i < spec->n_files; i++)
    m_files += str (spec->files[i]);
  m_state = KSharedConfig::openConfig (m_state_file, KConfig::SimpleConfig);
  KConfigGroup group (m_state, "FileDialog");

  QString folder = str (spec->current_folder);
  if (folder.isEmpty () && spec->current_file && *spec->current_file)
    folder = QFileInfo (str (spec->current_file)).absolutePath ();
  if (folder.isEmpty () || !QFileInfo (folder).isDir ())
    folder = group.readEntry ("LastFolder", QString ());
  if (folder.isEmpty () || !QFileInfo (folder).isDir ())
    folder = QDir::homePath ();
  m_folder = folder;
  m_directory = spec->directory;
  m_multiple = spec->multiple;
  for (size_t i = 0; i < spec->n_filters; i++)
    m_filter_lines += filterLine (spec->filters[i]);
  m_n_filters = int (spec->n_filters);
  m_current_filter = spec->current_filter >= 0 && size_t (spec->current_filter) < spec->n_filters
                       ? spec->current_filter : 0;
  if (m_mode == LIMEN_QT_FILE_SAVE)
    {
      m_current_file = str (spec->current_file);
      m_current_name = str (spec->current_name);
    }
  m_remote_ok = LimenQt::kioFuseAvailable ();
  if (spec->accept_label && *spec->accept_label)
    m_accept_label = LimenQt::mnemonicLabel (spec->accept_label);
  else if (m_mode == LIMEN_QT_FILE_SAVE_FILES)
    m_accept_label = i18nc ("@action:button", "&Save Here");

  setWindowTitle (str (spec->title));
  m_layout = new QVBoxLayout (this);
  if (spec->n_choices > 0)
    m_choices = new LimenQt::ChoicesWidget (spec->n_choices, spec->choices, this);

  int w = group.readEntry ("Width", 0), h = group.readEntry ("Height", 0);
  resize (w > 200 && h > 150 ? QSize (w, h) : QSize (840, 540));
}

void LimenFileDialog::applyMode ()
{
  switch (m_mode)
    {
    case LIMEN_QT_FILE_OPEN:
      m_widget->setOperationMode (KFileWidget::Opening);
      if (m_directory)
        m_widget->setMode (KFile::Directory | KFile::ExistingOnly);
      else
        m_widget->setMode ((m_multiple ? KFile::Files : KFile::File) | KFile::ExistingOnly);
      break;
    case LIMEN_QT_FILE_SAVE:
      m_widget->setOperationMode (KFileWidget::Saving);
      m_widget->setMode (KFile::File);
      m_widget->setConfirmOverwrite (true);
      break;
    case LIMEN_QT_FILE_SAVE_FILES:
      m_widget->setOperationMode (KFileWidget::Opening);
      m_widget->setMode (KFile::Directory | KFile::ExistingOnly);
      break;
    }
}

/* Whether an app can use @url without kio-fuse: a local file, or an item of a KIO protocol
 * of class ":local" (trash:/, desktop:/, ...), whose items are local files. */
static bool usableWithoutKioFuse (const QUrl &url)
{
  return url.isLocalFile () || KProtocolInfo::protocolClass (url.scheme ()) == QLatin1String (":local");
}

/* Without kio-fuse, remote places give an app nothing it can open: hide Network and
 * bookmarked servers in the Places panel of this dialog only (hiding them in the model
 * would write the person's shared places file). KFile::LocalOnly, as the reference has
 * it, would refuse the Trash's files too, which this dialog hands back as local paths. */
void LimenFileDialog::hideRemotePlaces ()
{
  auto *places = m_widget->findChild<KFilePlacesView *> ();
  auto *model = places ? qobject_cast<KFilePlacesModel *> (places->model ()) : nullptr;
  if (!model)
    return;
  auto apply = [places, model] {
    for (int row = 0; row < model->rowCount (); row++)
      {
        const QModelIndex index = model->index (row, 0);
        const QUrl url = model->url (index);
        /* trash:/ and the like are ":local", and the Recent group lists local files: their
         * items have local paths (KFile::LocalOnly takes them). */
        const auto group = model->groupType (index);
        const bool usable = group != KFilePlacesModel::RemoteType &&
                            (group == KFilePlacesModel::RecentlySavedType || usableWithoutKioFuse (url));
        if (!usable)
          places->setRowHidden (row, true);
      }
  };
  apply ();
  connect (model, &QAbstractItemModel::rowsInserted, places, apply);
  connect (model, &QAbstractItemModel::dataChanged, places, apply);
  connect (model, &QAbstractItemModel::modelReset, places, apply);
}

/* A server's URL typed or navigated to, without kio-fuse: say why it cannot be taken and
 * keep the dialog open (true: nothing remote, go on). */
bool LimenFileDialog::refuseRemote (const QList<QUrl> &urls)
{
  for (const QUrl &url : urls)
    if (url.isValid () && !usableWithoutKioFuse (url))
      {
        KMessageBox::error (this, i18n ("Files on other computers can be handed to the app only when kio-fuse is "
                                        "installed. Choose a file on this computer."),
                            i18nc ("@title:window", "Not on This Computer"));
        return false;
      }
  return true;
}

/* Every way of accepting ends here (KFileWidget's own slotOk included): without kio-fuse,
 * a server's file is refused before the dialog closes. */
void LimenFileDialog::done (int result)
{
  if (result == QDialog::Accepted && m_widget && !m_remote_ok && m_view_picked.isEmpty ())
    {
      QList<QUrl> urls = m_mode == LIMEN_QT_FILE_OPEN ? m_widget->selectedUrls () : QList<QUrl> { m_widget->selectedUrl () };
      if (m_mode == LIMEN_QT_FILE_SAVE_FILES && !urls.value (0).isValid ())
        urls = { m_widget->baseUrl () };
      if (!refuseRemote (urls))
        return;
    }
  _LimenQtDialog::done (result);
}

void LimenFileDialog::applyFilters ()
{
  KFileFilterCombo *combo = m_widget->filterWidget ();
  /* A folder dialog lists folders only: a filter of file names would change nothing. */
  if (m_n_filters > 0 && !m_directory)
    {
      m_widget->setFilter (m_filter_lines.join (QLatin1Char ('\n')));
      combo->setCurrentIndex (m_current_filter);
      Q_EMIT combo->filterChanged ();
    }
  else
    {
      /* An empty filter row only takes space. */
      const auto labels = m_widget->findChildren<QLabel *> ();
      for (QLabel *label : labels)
        if (label->buddy () == combo)
          label->hide ();
      combo->hide ();
    }
}

void LimenFileDialog::build ()
{
  if (m_widget || isClosedByPortal ())
    return;
  Busy busy (this);   /* KFileWidget's constructor runs a nested loop (KJob::exec) */
  m_widget = new KFileWidget (QUrl::fromLocalFile (m_folder), this);
  m_layout->addWidget (m_widget);
  /* View settings (detail/icon mode, hidden files) from our own file, not kdeglobals. */
  KConfigGroup viewGroup (m_state, "KFileWidget");
  m_widget->readConfig (viewGroup);
  /* Reading the config again fills the navigator's path box, which shows its protocol
   * list ("file ▾") before the breadcrumb; a refresh of the navigator hides it again, as
   * in every other KDE file dialog. */
  if (auto *navigator = m_widget->findChild<KUrlNavigator *> ())
    {
      navigator->setShowFullPath (!navigator->showFullPath ());
      navigator->setShowFullPath (!navigator->showFullPath ());
    }

  applyMode ();
  applyFilters ();
  if (!m_remote_ok)
    hideRemotePlaces ();

  if (m_mode == LIMEN_QT_FILE_SAVE)
    {
      if (!m_current_file.isEmpty ())
        m_widget->setSelectedUrl (QUrl::fromLocalFile (m_current_file));
      else if (!m_current_name.isEmpty ())
        m_widget->locationEdit ()->setEditText (m_current_name);
    }

  if (m_choices)
    m_widget->setCustomWidget (m_choices);

  QPushButton *ok = m_widget->okButton ();
  if (!m_accept_label.isEmpty ())
    ok->setText (m_accept_label);
  /* The buttons side by side under the widget, as KDE's own file dialog lays them out. */
  auto *buttons = new QDialogButtonBox (this);
  buttons->addButton (ok, QDialogButtonBox::AcceptRole);
  buttons->addButton (m_widget->cancelButton (), QDialogButtonBox::RejectRole);
  m_layout->addWidget (buttons);
  ok->show ();
  m_widget->cancelButton ()->show ();
  connect (ok, &QPushButton::clicked, this, [this] {
    if (acceptViewSelection () || acceptCurrentFolder ())
      return;
    Busy busy (this);   /* slotOk stats the typed name in a nested loop */
    m_widget->slotOk ();
  });
  /* Return in the name field or in the view would reach slotOk through KFileWidget's own
   * connections: look at it first (see acceptViewSelection() and acceptCurrentFolder()).
   * The name field's combo box holds the focus and passes keys on to its line edit, so both
   * are watched. The view is replaced when the user switches between icon and detail modes. */
  m_widget->locationEdit ()->installEventFilter (this);
  if (QLineEdit *edit = m_widget->locationEdit ()->lineEdit ())
    edit->installEventFilter (this);
  if (QLineEdit *edit = m_widget->locationEdit ()->lineEdit ())
    connect (edit, &QLineEdit::textEdited, this, [this] { m_name_typed = true; });
  watchView (m_widget->dirOperator ()->view ());
  connect (m_widget->dirOperator (), &KDirOperator::viewChanged, this, &LimenFileDialog::watchView);
  connect (m_widget, &KFileWidget::accepted, this, [this] {
    m_widget->accept ();
    accept ();
  });
  connect (m_widget->cancelButton (), &QPushButton::clicked, this, &QDialog::reject);
  if (m_mode == LIMEN_QT_FILE_SAVE_FILES)
    {
      /* Saving into the folder shown needs no name: OK (or Return) with an empty name
       * field means "here". */
      auto saveHere = [this] {
        if (m_widget->locationEdit ()->currentText ().trimmed ().isEmpty ())
          accept ();
      };
      connect (ok, &QPushButton::clicked, this, saveHere);
      connect (m_widget->locationEdit (), QOverload<const QString &>::of (&KComboBox::returnPressed), this, saveHere);
    }
  /* Tests and benchmarks wait for the listing before selecting in the view. */
  auto loaded = [this] {
    qCDebug (LIMEN_SHIM) << "file list loaded:" << m_widget->dirOperator ()->dirLister ()->items ().count () << "files";
  };
  connect (m_widget->dirOperator (), &KDirOperator::finishedLoading, this, loaded);
  if (LIMEN_SHIM ().isDebugEnabled ())
    connect (m_widget->dirOperator ()->dirLister (), &KCoreDirLister::itemsAdded, this, [this] {
      qCDebug (LIMEN_SHIM) << "listing:" << m_widget->dirOperator ()->dirLister ()->items ().count () << "files so far";
    });
  if (LIMEN_SHIM ().isDebugEnabled () && m_widget->dirOperator ()->dirLister ()->isFinished ())
    loaded ();   /* listed already, inside the constructor's nested loop */
  m_widget->show ();
  m_widget->locationEdit ()->setFocus ();
  if (m_mode == LIMEN_QT_FILE_SAVE)
    selectNameStem ();
  QWidget *target = m_widget->locationEdit ()->lineEdit () ? static_cast<QWidget *> (m_widget->locationEdit ()->lineEdit ())
                                                          : m_widget->locationEdit ();
  qCDebug (LIMEN_SHIM) << "file widget ready:" << windowTitle ();
  const QVector<PendingKey> keys = std::move (m_pending_keys);
  m_pending_keys.clear ();
  for (const PendingKey &k : keys)
    {
      QKeyEvent ev (QEvent::Type (k.type), k.key, k.modifiers, k.text);
      QCoreApplication::sendEvent (target, &ev);
    }
}

void LimenFileDialog::keyPressEvent (QKeyEvent *event)
{
  if (!m_widget && event->key () != Qt::Key_Escape)
    {
      m_pending_keys.append ({ int (event->type ()), event->key (), event->modifiers (), event->text () });
      event->accept ();
      return;
    }
  _LimenQtDialog::keyPressEvent (event);
}

void LimenFileDialog::keyReleaseEvent (QKeyEvent *event)
{
  if (!m_widget)
    {
      m_pending_keys.append ({ int (event->type ()), event->key (), event->modifiers (), event->text () });
      event->accept ();
      return;
    }
  _LimenQtDialog::keyReleaseEvent (event);
}

LimenFileDialog::~LimenFileDialog () = default;

bool LimenFileDialog::eventFilter (QObject *watched, QEvent *event)
{
  if (event->type () == QEvent::KeyPress && m_widget)
    {
      auto *key = static_cast<QKeyEvent *> (event);
      if ((key->key () == Qt::Key_Return || key->key () == Qt::Key_Enter) &&
          !(key->modifiers () & ~Qt::KeypadModifier) && (acceptViewSelection () || acceptCurrentFolder ()))
        return true;
    }
  return _LimenQtDialog::eventFilter (watched, event);
}

/* KFileWidget hands a selection of several files over as text: it writes the quoted
 * names into the Name field and, on Open, parses them back and stats each one in a
 * nested event loop. A QLineEdit holds at most 32,767 characters, so from about 3,000
 * files on the list is cut and the dialog complains that a half name does not exist;
 * 10,000 stats in nested loops take seconds; and while the folder is still being listed
 * the view's selection grows under the field's text (rows inserted inside a selected
 * range are selected too) without KFileWidget writing it again. So unless the person has
 * typed into the Name field since the view's selection last changed, a selection of
 * several files is taken from the view itself, as it is at this moment, however the
 * dialog is accepted. Typed names, folders in the selection (Open enters them) and a
 * single file stay KFileWidget's to handle. */
bool LimenFileDialog::acceptViewSelection ()
{
  if (!m_widget || m_mode != LIMEN_QT_FILE_OPEN || m_directory || !m_multiple || !m_view_picked.isEmpty () ||
      m_name_typed)
    return false;
  KDirOperator *ops = m_widget->dirOperator ();
  const KFileItemList items = ops->selectedItems ();
  if (items.size () < 2)
    return false;
  QList<QUrl> urls;
  urls.reserve (items.size ());
  for (const KFileItem &item : items)
    {
      /* A folder means "enter it" to KFileWidget; a file gone since the listing gets its
       * "could not be found" message (Open asks for existing files only). */
      if (item.isDir () || (item.isLocalFile () && !QFileInfo::exists (item.localPath ())) ||
          (!m_remote_ok && !usableWithoutKioFuse (item.url ())))
        return false;
      urls.append (item.url ());
    }
  qCDebug (LIMEN_SHIM) << "accepted from the view:" << urls.size () << "files,"
                       << (ops->dirLister ()->isFinished () ? "listed" : "while listing");
  m_view_picked = urls;
  /* What KFileWidget does on accepting (remembered folder, view settings), and the recent
   * documents it would add, as many as that list keeps. */
  m_widget->accept ();
  for (int i = 0; i < urls.size () && i < KRecentDocument::maximumItems (); i++)
    KRecentDocument::add (urls[i]);
  accept ();
  return true;
}

/* Whether the Name field or the view's selection speaks for the person: whichever they
 * touched last. KFileWidget's own writes into the field (setEditText) are no edits, and
 * the selections it makes in the view while a name is typed (completion) are no touch of
 * the view: only a change while the view has the focus counts. */
void LimenFileDialog::watchView (QAbstractItemView *view)
{
  if (!view)
    return;
  view->installEventFilter (this);
  if (view->selectionModel ())
    connect (view->selectionModel (), &QItemSelectionModel::selectionChanged, this, [this, view] {
      if (view->hasFocus ())
        m_name_typed = false;
    });
}

/* A folder dialog with no name typed and nothing selected: Open takes the folder shown, as
 * KDE's own folder chooser and the reference do; KFileWidget alone would do nothing. */
bool LimenFileDialog::acceptCurrentFolder ()
{
  if (!m_widget || m_mode != LIMEN_QT_FILE_OPEN || !m_directory || !m_view_picked.isEmpty ())
    return false;
  QLineEdit *edit = m_widget->locationEdit ()->lineEdit ();
  const QUrl folder = m_widget->baseUrl ().adjusted (QUrl::StripTrailingSlash);
  if (!edit || !edit->text ().trimmed ().isEmpty () || !m_widget->dirOperator ()->selectedItems ().isEmpty () ||
      !folder.isValid ())
    return false;
  if (!m_remote_ok && !refuseRemote ({ folder }))
    return true;   /* refused, and said why: the key is taken */
  m_view_picked = { folder };
  m_widget->accept ();
  accept ();
  return true;
}

/* Typing replaces the name the app suggested and keeps its extension ("minutes" of
 * "minutes.txt"; all of a name without one, or of one starting with its only dot). */
void LimenFileDialog::selectNameStem ()
{
  QLineEdit *edit = m_widget->locationEdit ()->lineEdit ();
  if (!edit || edit->text ().isEmpty ())
    return;
  const QString text = edit->text ();
  const int dot = text.lastIndexOf (QLatin1Char ('.'));
  edit->setSelection (0, dot > 0 ? dot : text.size ());
}

void LimenFileDialog::saveState ()
{
  if (m_state_file.isEmpty ())
    return;
  KConfigGroup group (m_state, "FileDialog");
  group.writeEntry ("Width", width ());
  group.writeEntry ("Height", height ());
  QUrl base = m_widget->baseUrl ();
  if (base.isLocalFile ())
    group.writePathEntry ("LastFolder", base.toLocalFile ());
  m_state->sync ();
}

void LimenFileDialog::onFinished (bool accepted)
{
  if (!accepted || !m_widget)
    {
      complete ([this] { m_done (this, LIMEN_QT_RESPONSE_CANCELLED, nullptr, m_user_data); });
      return;
    }
  saveState ();
  QList<QUrl> urls = !m_view_picked.isEmpty () ? m_view_picked
                     : m_mode == LIMEN_QT_FILE_OPEN ? m_widget->selectedUrls () : QList<QUrl> { m_widget->selectedUrl () };
  urls.removeAll (QUrl ());
  if (m_mode == LIMEN_QT_FILE_SAVE_FILES && urls.isEmpty ())
    urls.append (m_widget->baseUrl ());

  /* KIO URLs (e.g. a Places entry like desktop:/ or a mounted device) resolve to local
   * paths where one exists; the stats run in the event loop, never blocking. */
  auto pending = std::make_shared<int> (0);
  auto resolved = std::make_shared<QList<QUrl>> (urls);
  for (int i = 0; i < urls.size (); i++)
    {
      if (urls[i].isLocalFile ())
        continue;
      (*pending)++;
      KIO::StatJob *job = KIO::mostLocalUrl (urls[i], KIO::HideProgressInfo);
      connect (job, &KJob::result, this, [this, job, i, pending, resolved] {
        if (!job->error ())
          (*resolved)[i] = job->mostLocalUrl ();
        if (--(*pending) == 0)
          reportMapped (*resolved);
      });
    }
  if (*pending == 0)
    reportMapped (urls);
}

/* What is still remote after mostLocalUrl (sftp://, smb://, ...) goes through kio-fuse: a
 * host app gets the path in its mount, the frontend exports that path to a sandboxed one,
 * and writes to it reach the server. SaveFile's file may not exist yet: its folder is
 * mounted and the name put after it. */
void LimenFileDialog::reportMapped (const QList<QUrl> &urls)
{
  bool remote = false;
  for (const QUrl &u : urls)
    remote = remote || !u.isLocalFile ();
  if (!remote || !m_remote_ok)
    {
      report (urls);
      return;
    }
  const auto how = m_mode == LIMEN_QT_FILE_SAVE ? LimenQt::RemoteMapping::Parent : LimenQt::RemoteMapping::Item;
  LimenQt::mapRemoteUrls (this, urls, how, [this] (const QList<QUrl> &mapped) { report (mapped); });
}

void LimenFileDialog::report (const QList<QUrl> &picked)
{
  QList<QUrl> urls = picked;
  if (m_mode == LIMEN_QT_FILE_SAVE_FILES && !urls.isEmpty ())
    {
      QUrl dir = urls.first ();
      urls.clear ();
      for (const QString &name : m_files)
        {
          QUrl u = dir;
          u.setPath (dir.path () + (dir.path ().endsWith (QLatin1Char ('/')) ? QString () : QStringLiteral ("/")) + name);
          urls.append (u);
        }
    }
  QVector<QByteArray> encoded;
  for (const QUrl &u : urls)
    encoded.append (u.toEncoded ());
  QVector<const char *> ptrs;
  for (const QByteArray &e : encoded)
    ptrs.append (e.constData ());
  QVector<QPair<QByteArray, QByteArray>> values;
  if (m_choices)
    values = m_choices->values ();
  QVector<LimenQtChoiceResult> choices = LimenQt::choiceResults (values);
  LimenQtFileChooserResult result {};
  result.n_uris = size_t (ptrs.size ());
  result.uris = ptrs.data ();
  result.filter = m_n_filters > 0 ? m_widget->filterWidget ()->currentIndex () : -1;
  result.n_choices = size_t (choices.size ());
  result.choices = choices.data ();
  complete ([&] { m_done (this, urls.isEmpty () ? LIMEN_QT_RESPONSE_CANCELLED : LIMEN_QT_RESPONSE_OK,
                          &result, m_user_data); });
}

extern "C" LIMEN_QT_EXPORT LimenQtDialog *
limen_qt_file_chooser_open (const LimenQtFileChooserSpec *spec, LimenQtFileChooserDone done, void *user_data)
{
  if (!LimenQt::ensureApplication ())
    return nullptr;
  auto *dialog = new LimenFileDialog (spec, done, user_data);
  /* Map the window first and fill it in the next turn of the loop: KFileWidget takes
   * tens of milliseconds to build (places, KIO), and the user sees the dialog sooner. */
  dialog->present ();
  QTimer::singleShot (0, dialog, [dialog] { dialog->build (); });
  return dialog;
}
