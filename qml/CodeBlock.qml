// A fenced code block: monospace, its language, and a copy button.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Arbor

Pane {
    id: root
    objectName: "codeBlock"
    property string code
    property string language
    padding: 6
    background: Rectangle {
        radius: 6
        color: Qt.darker(root.palette.base, 1.06)
        border.color: root.palette.mid
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 2
        RowLayout {
            Layout.fillWidth: true
            Label {
                text: root.language.length > 0 ? root.language : qsTr("code")
                font.pixelSize: 11
                opacity: 0.6
                Layout.fillWidth: true
            }
            ToolButton {
                objectName: "codeCopyButton"
                text: qsTr("Copy")
                font.pixelSize: 11
                Accessible.name: qsTr("Copy the code")
                onClicked: ChatController.copyText(root.code)
            }
        }
        TextEdit {
            objectName: "codeText"
            Layout.fillWidth: true
            readOnly: true
            selectByMouse: true
            wrapMode: TextEdit.WrapAnywhere
            text: root.code
            font.family: "monospace"
            color: root.palette.text
            Accessible.name: qsTr("Code")
        }
    }
}
