/* Limen — liblimen-qt internals: the dialog base every portal dialog derives from.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "app-text.h"
#include "limen-qt.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialog>
#include <QLoggingCategory>
#include <QPointer>
#include <QString>
#include <QVector>
#include <QWidget>
#include <functional>

/* "limen.shim" (debug off by default): QT_LOGGING_RULES=limen.shim.debug=true. */
Q_DECLARE_LOGGING_CATEGORY (LIMEN_SHIM)

namespace LimenQt {

/* Create the QApplication on first need (never before: Qt costs memory). FALSE and
 * @reason when no window system is reachable. */
bool ensureApplication (const char **reason = nullptr);

/* A QCoreApplication at least (notifications work without a display). */
void ensureCoreApplication ();

inline QString str (const char *s)
{
  return s ? QString::fromUtf8 (s) : QString ();
}

/* Portal labels use '_' for mnemonics (GTK style); Qt uses '&'. */
QString mnemonicLabel (const char *label);

/* Make @w a transient of the portal's parent window and apply modality. */
void applyWindow (QWidget *w, const LimenQtWindow *window);

/* Make @w the child of the caller's toplevel exported under xdg-foreign @handle, once
 * @w's window is exposed. A bad handle leaves it parentless, logged. The work is done by
 * liblimen-qt-wayland.so (wayland-parent.cpp), loaded from beside this module on first use. */
void setWaylandParent (QWidget *w, const QString &handle);

/* A still of the source @id ("screen:NAME" or "window:UUID") from KWin's ScreenShot2, for
 * the picker; @done runs only with an image, and never after @context is gone. */
void captureSource (QObject *context, const QString &id, const std::function<void (const QImage &)> &done);

} // namespace LimenQt

/* liblimen-qt-wayland.so's entry point. */
extern "C" LIMEN_QT_EXPORT void limen_qt_wayland_set_parent (QWidget *w, const QString &handle);

namespace LimenQt {

/* Combo boxes and check boxes for portal choices; reads them back. */
class ChoicesWidget : public QWidget
{
public:
  ChoicesWidget (size_t n, const LimenQtChoice *choices, QWidget *parent = nullptr);
  /* (id, value) pairs, in the order given. */
  QVector<QPair<QByteArray, QByteArray>> values () const;
  bool isEmpty () const { return m_ids.isEmpty (); }
  QWidget *widgetFor (const QByteArray &id) const;

private:
  QVector<QByteArray> m_ids;
  QVector<QWidget *> m_widgets;
};

/* Turn ChoicesWidget values into the C result array; the QByteArrays must outlive it. */
QVector<LimenQtChoiceResult> choiceResults (const QVector<QPair<QByteArray, QByteArray>> &values);

} // namespace LimenQt

/* The C handle is the dialog itself. It reports once: finished() → onFinished(), which
 * calls complete(); a portal Close (closeFromPortal) suppresses the report. */
struct _LimenQtDialog : public QDialog
{
  explicit _LimenQtDialog (const LimenQtWindow *window);
  ~_LimenQtDialog () override;

  void closeFromPortal ();
  bool isClosedByPortal () const { return m_closed; }
  /* Start showing; called by the open functions after setup. */
  void present ();

  /* While a Busy guard lives, the dialog is on the stack (e.g. inside KFileWidget code
   * that runs a nested event loop): deleting it then would pull the floor away, so
   * disposal waits until the last guard goes. */
  class Busy
  {
  public:
    explicit Busy (_LimenQtDialog *d) : m_d (d) { m_d->m_busy++; }
    ~Busy () { if (--m_d->m_busy == 0 && m_d->m_dispose_pending) m_d->deleteLater (); }
  private:
    _LimenQtDialog *m_d;
  };

protected:
  virtual void onFinished (bool accepted) = 0;
  void dispose ();
  /* Run @report unless closed by the portal, then dispose of the dialog. */
  void complete (const std::function<void ()> &report);

private:
  bool m_closed = false;
  bool m_completed = false;
  int m_busy = 0;
  bool m_dispose_pending = false;
  LimenQtWindow m_window;
  QByteArray m_parent;
};
