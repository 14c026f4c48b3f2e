// MessageSegmentsModel, checked by QAbstractItemModelTester: a streaming reply grows by
// updating its last paragraph in place and inserting new ones, never resetting, and a
// rewritten text ends up exactly as its fresh split.
#include "models/MessageSegmentsModel.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QtTest>

using namespace arbor::app;

namespace {

QStringList dump(const MessageSegmentsModel& m) {
    QStringList out;
    for (int i = 0; i < m.rowCount(); ++i) {
        const QModelIndex x = m.index(i);
        out << x.data(MessageSegmentsModel::SegmentKindRole).toString() + QLatin1Char('|') +
                   x.data(MessageSegmentsModel::SegmentLanguageRole).toString() + QLatin1Char('|') +
                   x.data(MessageSegmentsModel::SegmentBodyRole).toString();
    }
    return out;
}

QStringList fresh(const QString& text) {
    MessageSegmentsModel m;
    m.setText(text);
    return dump(m);
}

}  // namespace

class TestMessageSegmentsModel : public QObject {
    Q_OBJECT
private slots:
    void streamingUpdatesInPlace() {
        MessageSegmentsModel m;
        QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QSignalSpy reset(&m, &QAbstractItemModel::modelReset);
        QSignalSpy inserted(&m, &QAbstractItemModel::rowsInserted);
        QSignalSpy changed(&m, &QAbstractItemModel::dataChanged);
        const QString reply = QStringLiteral("First paragraph, long enough.\n\nSecond one:\n\n```cpp\nint x = 1;\nint y = 2;\n```\nAfter the code.");
        QString sofar;
        int changedFirst = 0;
        for (const QChar c : reply) {
            sofar += c;
            const int before = int(changed.size());
            m.setText(sofar);
            for (int k = before; k < changed.size(); ++k)
                if (changed.at(k).at(0).toModelIndex().row() == 0 && sofar.size() > 30) ++changedFirst;
            QCOMPARE(dump(m), fresh(sofar));  // the oracle: a fresh split of the same text
        }
        QCOMPARE(reset.size(), 0);
        QCOMPARE(m.rowCount(), 4);
        QCOMPARE(changedFirst, 0);  // the finished first paragraph was never touched again
        QVERIFY(inserted.size() >= 3);
    }

    void longLiveParagraphIsPlainUntilFinished() {
        MessageSegmentsModel m;
        QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
        auto plain = [&](int row) { return m.index(row).data(MessageSegmentsModel::SegmentPlainRole).toBool(); };
        const QString longPara = QString(QStringLiteral("**word** ")).repeated(MessageSegmentsModel::kLiveMarkdownLimit / 9 + 1);
        m.setLive(true);
        m.setText(QStringLiteral("short one"));
        QVERIFY(!plain(0));
        m.setText(QStringLiteral("short one\n\n") + longPara);
        QVERIFY(!plain(0));
        QVERIFY(plain(1));  // long and still growing
        m.setText(QStringLiteral("short one\n\n") + longPara + QStringLiteral("\n\nnext"));
        QVERIFY(!plain(1));  // finished: Markdown again
        QVERIFY(!plain(2));
        m.setText(QStringLiteral("short one\n\n") + longPara);
        QVERIFY(plain(1));
        m.setLive(false);
        QVERIFY(!plain(1));
    }

    void rewritesMatchAFreshSplit_data() {
        QTest::addColumn<QString>("from");
        QTest::addColumn<QString>("to");
        QTest::newRow("code becomes prose") << "```\nx\n```" << "just x";
        QTest::newRow("shorter") << "a\n\nb\n\nc" << "a";
        QTest::newRow("longer") << "a" << "a\n\n```py\np\n```\n\nz";
        QTest::newRow("cleared") << "a\n\nb" << "";
    }
    void rewritesMatchAFreshSplit() {
        QFETCH(QString, from);
        QFETCH(QString, to);
        MessageSegmentsModel m;
        QAbstractItemModelTester tester(&m, QAbstractItemModelTester::FailureReportingMode::QtTest);
        m.setText(from);
        m.setText(to);
        QCOMPARE(dump(m), fresh(to));
        for (const QByteArray& name : m.roleNames()) QVERIFY(name != "text" && name != "color");
    }
};

QTEST_GUILESS_MAIN(TestMessageSegmentsModel)
#include "tst_message_segments_model.moc"
