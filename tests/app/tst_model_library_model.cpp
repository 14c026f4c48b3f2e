// ModelLibraryModel over a real store thread, checked by QAbstractItemModelTester: importing
// the demo model records what `arbor-cli info --json` reports (the oracle), files are never
// copied, rejected files say why, and a moved model is noticed as missing.
#include "chat/StoreThread.h"
#include "models/ModelLibraryModel.h"
#include "store/ModelRecords.h"

#include <QAbstractItemModelTester>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace arbor::app;

class TestModelLibraryModel : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    std::unique_ptr<StoreThread> m_store;
    std::unique_ptr<ModelLibraryModel> m_model;
    std::unique_ptr<QAbstractItemModelTester> m_tester;

    QPair<QStringList, QStringList> import(const QStringList& paths) {
        QSignalSpy done(m_model.get(), &ModelLibraryModel::importFinished);
        m_model->importPaths(paths);
        if (!done.wait(10000)) return {};
        return {done.at(0).at(0).toStringList(), done.at(0).at(1).toStringList()};
    }

private slots:
    void init() {
        m_store = std::make_unique<StoreThread>();
        QString why;
        static int n = 0;
        QVERIFY(m_store->open(m_dir.filePath(QStringLiteral("m%1.sqlite").arg(++n)), &why));
        m_model = std::make_unique<ModelLibraryModel>();
        m_model->setStore(m_store.get());
        m_tester = std::make_unique<QAbstractItemModelTester>(m_model.get(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    }
    void cleanup() {
        m_tester.reset();
        m_model.reset();
        m_store.reset();
    }

    void importsTheDemoModelAsArborCliSeesIt() {
        const QString path = QStringLiteral(ARBOR_DEMO_MODEL_SOURCE);
        const auto [accepted, rejected] = import({path});
        QCOMPARE(accepted, QStringList{path});
        QVERIFY(rejected.isEmpty());
        QCOMPARE(m_model->rowCount(), 1);
        const QModelIndex i = m_model->index(0);
        QCOMPARE(i.data(ModelLibraryModel::ModelPathRole).toString(), path);
        QCOMPARE(i.data(ModelLibraryModel::FileSizeRole).toLongLong(), QFileInfo(path).size());
        QVERIFY(!i.data(ModelLibraryModel::MissingRole).toBool());

        const QString cli = qEnvironmentVariable("ARBOR_CLI");
        if (cli.isEmpty() || !QFileInfo::exists(cli)) {
            if (qEnvironmentVariable("CI") == QLatin1String("true")) QFAIL("ARBOR_CLI is needed in CI");
            QSKIP("arbor-cli is not built; the oracle comparison is skipped");
        }
        QProcess p;
        p.start(cli, {QStringLiteral("info"), path, QStringLiteral("--json")});
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 0);
        const QJsonObject info = QJsonDocument::fromJson(p.readAllStandardOutput()).object();
        QVERIFY2(!info.isEmpty(), "arbor-cli info --json printed no object");
        const QVariantMap details = m_model->details(0);
        auto find = [&](const QString& key) -> QJsonValue {
            if (info.contains(key)) return info.value(key);
            for (const QString& k : info.keys())
                if (info.value(k).isObject() && info.value(k).toObject().contains(key)) return info.value(k).toObject().value(key);
            return {};
        };
        QCOMPARE(i.data(ModelLibraryModel::ArchitectureRole).toString(), find(QStringLiteral("architecture")).toString());
        QCOMPARE(i.data(ModelLibraryModel::QuantTypeRole).toString(), find(QStringLiteral("main_type")).toString());
        const QJsonValue ctx = find(QStringLiteral("context_length"));
        if (!ctx.isUndefined()) QCOMPARE(i.data(ModelLibraryModel::ContextLengthRole).toLongLong(), qint64(ctx.toDouble()));
        const QJsonValue params = find(QStringLiteral("parameters"));
        if (!params.isUndefined()) QCOMPARE(i.data(ModelLibraryModel::ParametersRole).toLongLong(), qint64(params.toDouble()));
        QVERIFY(details.contains(QStringLiteral("block_count")));
        QVERIFY(i.data(ModelLibraryModel::SummaryTextRole).toString().startsWith(find(QStringLiteral("architecture")).toString()));
        for (const QByteArray& name : m_model->roleNames()) QVERIFY(name != "text" && name != "color");
    }

    void rejectsWithReasons() {
        const QString text = m_dir.filePath(QStringLiteral("notes.txt"));
        QFile f(text);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("just some notes\n");
        f.close();
        const QString truncated = m_dir.filePath(QStringLiteral("cut.gguf"));
        QFile src(QStringLiteral(ARBOR_DEMO_MODEL_SOURCE));
        QVERIFY(src.open(QIODevice::ReadOnly));
        QFile cut(truncated);
        QVERIFY(cut.open(QIODevice::WriteOnly));
        cut.write(src.read(100));
        cut.close();
        const auto [accepted, rejected] =
            import({text, truncated, m_dir.path(), m_dir.filePath(QStringLiteral("nothing.gguf")), QStringLiteral(ARBOR_DEMO_MODEL_SOURCE)});
        QCOMPARE(accepted.size(), 1);
        QCOMPARE(rejected.size(), 4);
        QVERIFY2(rejected[0].startsWith(QStringLiteral("notes.txt")) && rejected[0].contains(QStringLiteral("not a GGUF file")), qPrintable(rejected[0]));
        QVERIFY2(rejected[1].startsWith(QStringLiteral("cut.gguf")) && rejected[1].contains(QStringLiteral("byte")), qPrintable(rejected[1]));
        QVERIFY2(rejected[2].contains(QStringLiteral("folder")), qPrintable(rejected[2]));
        QVERIFY2(rejected[3].contains(QStringLiteral("does not exist")), qPrintable(rejected[3]));
        QCOMPARE(m_model->lastRejected(), rejected);
        QCOMPARE(m_model->rejectedText().count(QLatin1Char('\n')), 3);
        QCOMPARE(m_model->rowCount(), 1);
        m_model->clearRejected();
        QVERIFY(m_model->lastRejected().isEmpty());
    }

    void noticesAMovedModel() {
        const QString copy = m_dir.filePath(QStringLiteral("copy.gguf"));
        QVERIFY(QFile::copy(QStringLiteral(ARBOR_DEMO_MODEL_SOURCE), copy));
        QCOMPARE(import({copy}).first.size(), 1);
        QVERIFY(!m_model->index(0).data(ModelLibraryModel::MissingRole).toBool());
        QVERIFY(QFile::rename(copy, copy + QStringLiteral(".moved")));
        m_store->post([](StoreContext& s) { s.models.refreshMissing(); });
        QSignalSpy reset(m_model.get(), &QAbstractItemModel::modelReset);
        m_model->refresh();
        QVERIFY(reset.wait(5000));
        QVERIFY(m_model->index(0).data(ModelLibraryModel::MissingRole).toBool());
        QVERIFY(m_model->index(0).data(ModelLibraryModel::SummaryTextRole).toString().contains(QStringLiteral("missing")));
    }
};

QTEST_GUILESS_MAIN(TestModelLibraryModel)
#include "tst_model_library_model.moc"
