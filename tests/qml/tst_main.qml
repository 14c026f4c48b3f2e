// Main.qml loads and carries the skeleton's named items.
import QtQuick
import QtTest
import Arbor

TestCase {
    id: testCase
    name: "MainWindow"
    when: windowShown

    Component {
        id: mainComponent
        Main {}
    }

    function test_skeletonItemsExist_data() {
        return [
            { tag: "sidebar", objectName: "sidebar" },
            { tag: "search", objectName: "conversationSearch" },
            { tag: "newChat", objectName: "newChatButton" },
            { tag: "conversationList", objectName: "conversationList" },
            { tag: "chatView", objectName: "chatView" },
            { tag: "messageList", objectName: "messageList" },
            { tag: "emptyState", objectName: "emptyState" },
            { tag: "dropHint", objectName: "dropHint" },
            { tag: "tryDemo", objectName: "tryDemoButton" },
            { tag: "composer", objectName: "composer" },
            { tag: "statusBar", objectName: "statusBar" },
            { tag: "dropArea", objectName: "dropArea" },
        ]
    }

    function test_skeletonItemsExist(data) {
        const win = createTemporaryObject(mainComponent, testCase)
        verify(win, "Main.qml failed to load")
        compare(win.objectName, "mainWindow")
        const item = findChild(win.contentItem, data.objectName) || findChild(win, data.objectName)
        verify(item, "missing item " + data.objectName)
        verify(item.visible, data.objectName + " is not visible")
    }

    function test_composerDisabledWithoutModel() {
        const win = createTemporaryObject(mainComponent, testCase)
        const input = findChild(win.contentItem, "composerInput")
        verify(input)
        verify(!input.enabled, "the composer must be disabled while no model is loaded")
        const send = findChild(win.contentItem, "sendButton")
        verify(!send.enabled)
    }
}
