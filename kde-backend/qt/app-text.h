/* Limen — an app's words in Qt widgets, for the dialogs (liblimen-qt) and the permissions
 * page alike. Header-only: the page is its own library, not linked to the dialogs'.
 * SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <QString>
#include <QTextBoundaryFinder>
#include <QVector>

namespace LimenQt {

/* A tool tip that shows @text as it is: Qt renders a tool tip as markup when it looks like
 * markup, and what an app wrote may. */
inline QString plainToolTip (const QString &text)
{
  return text.isEmpty () ? text : QStringLiteral ("<qt>") + text.toHtmlEscaped () + QStringLiteral ("</qt>");
}

/* @text (an app's words) where a run with no place to break a line is longer than any word
 * (30 characters): a zero-width space every 12 characters of it, never inside a character,
 * nor after a '&' (a mnemonic's, or half of "&&"). Word wrap would otherwise let such a run
 * go past a label's edge. Shorter words stay whole. Not for text a person may copy. */
inline QString breakable (const QString &text)
{
  constexpr int longest_word = 30, piece = 12;
  QString out;
  QTextBoundaryFinder lines (QTextBoundaryFinder::Line, text);
  int from = 0;

  for (int to = lines.toNextBoundary (); to != -1; from = to, to = lines.toNextBoundary ())
    {
      const QString run = text.mid (from, to - from);
      QTextBoundaryFinder characters (QTextBoundaryFinder::Grapheme, run);
      QVector<int> ends;
      int letters = 0;

      for (int start = 0, end = characters.toNextBoundary (); end != -1; start = end, end = characters.toNextBoundary ())
        {
          ends.append (end);
          letters += !run.at (start).isSpace ();
        }
      if (letters <= longest_word)
        {
          out += run;
          continue;
        }
      for (int i = 0, start = 0, count = 0; i < ends.size (); start = ends[i++], count++)
        {
          if (count >= piece && !out.endsWith (QLatin1Char ('&')))
            {
              out += QChar (0x200B);
              count = 0;
            }
          out += run.midRef (start, ends[i] - start);
        }
    }
  return out;
}

} // namespace LimenQt
