// Where the user writes. Disabled, with the reason shown, while no model is loaded.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

Pane {
    id: root
    objectName: "composer"
    property bool modelLoaded: false
    padding: 12

    background: Rectangle {
        color: palette.base
        Rectangle {
            width: parent.width
            height: 1
            color: palette.mid
        }
    }

    RowLayout {
        anchors.fill: parent
        spacing: 8

        ScrollView {
            Layout.fillWidth: true
            Layout.preferredHeight: Math.min(Math.max(input.implicitHeight, 40), 160)
            TextArea {
                id: input
                objectName: "composerInput"
                enabled: root.modelLoaded
                wrapMode: TextEdit.Wrap
                placeholderText: root.modelLoaded ? qsTr("Message (Enter sends, Shift+Enter for a new line)")
                                                  : qsTr("Load a model to start chatting")
                Accessible.name: qsTr("Message to send")
            }
        }
        Button {
            objectName: "sendButton"
            text: qsTr("Send")
            enabled: root.modelLoaded && input.text.length > 0
            Accessible.name: qsTr("Send message")
        }
    }
}
