// What an empty chat shows: without a model, how to get one (drop, Ctrl+O, or the demo model);
// with one, an invitation to write.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Arbor

ColumnLayout {
    id: root
    objectName: "emptyState"
    spacing: 14

    Label {
        Layout.alignment: Qt.AlignHCenter
        text: ChatController.modelLoaded ? qsTr("Chat with %1").arg(ChatController.modelName) : qsTr("Chat with a local model")
        font.pixelSize: 24
        font.bold: true
    }
    Label {
        objectName: "dropHint"
        visible: !ChatController.modelLoaded
        Layout.fillWidth: true
        horizontalAlignment: Text.AlignHCenter
        wrapMode: Text.WordWrap
        opacity: 0.75
        text: qsTr("Drop a .gguf model file anywhere on this window, or open one with Ctrl+O. "
                   + "Chats are saved as trees: editing or regenerating a message makes a branch, nothing is lost.")
    }
    Button {
        objectName: "tryDemoButton"
        visible: !ChatController.modelLoaded
        enabled: ChatController.demoAvailable && ChatController.modelState !== "loading"
        Layout.alignment: Qt.AlignHCenter
        text: qsTr("Try the demo model")
        highlighted: true
        Accessible.name: qsTr("Load the bundled demo model")
        onClicked: ChatController.useDemoModel()
    }
    Label {
        objectName: "startHint"
        visible: ChatController.modelLoaded
        Layout.fillWidth: true
        horizontalAlignment: Text.AlignHCenter
        wrapMode: Text.WordWrap
        opacity: 0.75
        text: qsTr("Write a message below. Enter sends, Shift+Enter adds a line, Esc stops a reply.")
    }
}
