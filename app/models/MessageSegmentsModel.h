// One message's answer as a list of segments (paragraphs of Markdown prose, and fenced code
// blocks), for the QML Repeater that draws it. setText() updates it in place: while a reply
// streams only its last segment changes, so only that one is laid out again.
//
// Laying out Markdown costs more than linear time in the paragraph's length, so while a reply
// streams, a last paragraph longer than kLiveMarkdownLimit is shown as plain text until it is
// finished (segmentPlain); every finished paragraph is Markdown.
#pragma once

#include "models/MarkdownSegments.h"

#include <QAbstractListModel>
#include <QtQml/qqmlregistration.h>

namespace arbor::app {

class MessageSegmentsModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("MessageSegmentsModel comes with a message (its segmentModel role)")

public:
    enum Role {
        SegmentKindRole = Qt::UserRole + 1,  // "prose" or "code"
        SegmentBodyRole,                     // Markdown, or the code without its fences
        SegmentLanguageRole,                 // the code fence's info string
        SegmentPlainRole,                    // show as plain text (a long paragraph still streaming)
    };
    Q_ENUM(Role)

    explicit MessageSegmentsModel(QObject* parent = nullptr) : QAbstractListModel(parent) {}

    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    static constexpr int kLiveMarkdownLimit = 1500;

    void setText(const QString& text);
    // The message is streaming: its last segment may still grow.
    void setLive(bool live);
    const QVector<MarkdownSegment>& segments() const { return m_segments; }

private:
    bool plainAt(int row) const;

    QString m_text;
    bool m_live = false;
    QVector<MarkdownSegment> m_segments;
};

}  // namespace arbor::app
