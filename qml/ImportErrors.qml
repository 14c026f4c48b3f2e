// Files that could not be imported (a drop, the Open dialog, the command line), each with
// the reason.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Arbor

Pane {
    id: root
    objectName: "importErrors"
    visible: ChatController.library.rejectedText.length > 0
    padding: 10
    background: Rectangle {
        radius: 8
        color: Qt.rgba(0.75, 0.22, 0.17, 0.92)
    }

    RowLayout {
        anchors.fill: parent
        Label {
            objectName: "importErrorText"
            Layout.fillWidth: true
            color: "white"
            wrapMode: Text.WordWrap
            text: qsTr("Not imported:") + "\n" + ChatController.library.rejectedText
        }
        ToolButton {
            objectName: "dismissImportErrors"
            text: "✕"
            Accessible.name: qsTr("Dismiss the import errors")
            onClicked: ChatController.library.clearRejected()
        }
    }
}
