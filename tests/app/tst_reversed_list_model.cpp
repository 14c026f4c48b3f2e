// ReversedListModel, checked by QAbstractItemModelTester: after every kind of change of its
// source (insert anywhere, remove, data change, move, reset) its rows are the source's rows in
// reverse (the oracle is the source read backwards), and sourceRow maps each row back.
#include "models/ReversedListModel.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QStringListModel>
#include <QtTest>

using namespace arbor::app;

class TestReversedListModel : public QObject {
    Q_OBJECT

    static void checkMirrors(const QStringListModel& source, const ReversedListModel& view) {
        const int n = source.rowCount();
        QCOMPARE(view.rowCount(), n);
        QCOMPARE(view.count(), n);
        for (int r = 0; r < n; ++r) {
            const QModelIndex i = view.index(r);
            QCOMPARE(i.data(Qt::DisplayRole).toString(), source.index(n - 1 - r).data(Qt::DisplayRole).toString());
            QCOMPARE(i.data(ReversedListModel::SourceRowRole).toInt(), n - 1 - r);
        }
    }

private slots:
    void followsEveryChange_data() {
        QTest::addColumn<QString>("change");
        for (const char* c : {"append", "prepend", "insert-middle", "remove-last", "remove-first", "remove-middle", "set-data", "move", "reset"})
            QTest::newRow(c) << QString::fromLatin1(c);
    }
    void followsEveryChange() {
        QFETCH(QString, change);
        QStringListModel source({QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("c"), QStringLiteral("d")});
        ReversedListModel view;
        view.setSourceModel(&source);
        QAbstractItemModelTester tester(&view, QAbstractItemModelTester::FailureReportingMode::QtTest);
        checkMirrors(source, view);
        QSignalSpy count(&view, &ReversedListModel::countChanged);
        QSignalSpy inserted(&view, &QAbstractItemModel::rowsInserted);
        QSignalSpy changed(&view, &QAbstractItemModel::dataChanged);
        if (change == QLatin1String("append")) {
            QVERIFY(source.insertRows(4, 2));
            source.setData(source.index(4), QStringLiteral("e"));
            source.setData(source.index(5), QStringLiteral("f"));
            QCOMPARE(inserted.at(0).at(1).toInt(), 0);  // the newest rows come first
            QCOMPARE(inserted.at(0).at(2).toInt(), 1);
        } else if (change == QLatin1String("prepend")) {
            QVERIFY(source.insertRows(0, 1));
            source.setData(source.index(0), QStringLiteral("z"));
            QCOMPARE(inserted.at(0).at(1).toInt(), 4);
        } else if (change == QLatin1String("insert-middle")) {
            QVERIFY(source.insertRows(2, 3));
            for (int i = 2; i < 5; ++i) source.setData(source.index(i), QStringLiteral("m%1").arg(i));
        } else if (change == QLatin1String("remove-last")) {
            QVERIFY(source.removeRows(3, 1));
        } else if (change == QLatin1String("remove-first")) {
            QVERIFY(source.removeRows(0, 2));
        } else if (change == QLatin1String("remove-middle")) {
            QVERIFY(source.removeRows(1, 2));
        } else if (change == QLatin1String("set-data")) {
            source.setData(source.index(1), QStringLiteral("B"));
            QCOMPARE(changed.size(), 1);
            QCOMPARE(changed.at(0).at(0).toModelIndex().row(), 2);
        } else if (change == QLatin1String("move")) {
            QVERIFY(source.moveRows({}, 0, 1, {}, 4));
        } else if (change == QLatin1String("reset")) {
            source.setStringList({QStringLiteral("x"), QStringLiteral("y")});
        }
        checkMirrors(source, view);
        if (change != QLatin1String("set-data")) QVERIFY(count.size() >= 1);
    }

    void aDestroyedSourceLeavesAnEmptyModel() {
        auto source = std::make_unique<QStringListModel>(QStringList{QStringLiteral("a"), QStringLiteral("b")});
        ReversedListModel view;
        view.setSourceModel(source.get());
        QAbstractItemModelTester tester(&view, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(view.rowCount(), 2);
        source.reset();
        QCOMPARE(view.rowCount(), 0);
        QVERIFY(!view.index(0).isValid());
    }
};

QTEST_GUILESS_MAIN(TestReversedListModel)
#include "tst_reversed_list_model.moc"
