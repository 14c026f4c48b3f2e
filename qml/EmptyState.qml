// First-run state: what to do when no model is loaded yet.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

ColumnLayout {
    id: root
    objectName: "emptyState"
    spacing: 14

    Label {
        Layout.alignment: Qt.AlignHCenter
        text: qsTr("Chat with a local model")
        font.pixelSize: 24
        font.bold: true
    }
    Label {
        objectName: "dropHint"
        Layout.fillWidth: true
        horizontalAlignment: Text.AlignHCenter
        wrapMode: Text.WordWrap
        opacity: 0.75
        text: qsTr("Drop a .gguf model file anywhere on this window, or open one with Ctrl+O. "
                   + "Chats are saved as trees: editing or regenerating a message makes a branch, nothing is lost.")
    }
    Button {
        objectName: "tryDemoButton"
        Layout.alignment: Qt.AlignHCenter
        text: qsTr("Try the demo model")
        highlighted: true
        Accessible.name: qsTr("Load the bundled demo model")
    }
}
