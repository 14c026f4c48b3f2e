// Where the user writes: Enter sends, Shift+Enter adds a line, Stop (or Esc) cancels a reply.
// Disabled, with the reason shown, while no model is loaded.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Arbor

Pane {
    id: root
    objectName: "composer"
    readonly property bool modelLoaded: ChatController.modelLoaded
    padding: 12

    function send() {
        if (input.text.trim().length === 0 || !root.modelLoaded || ChatController.generating)
            return
        if (ChatController.send(input.text))
            input.text = ""
    }

    background: Rectangle {
        color: root.palette.base
        Rectangle {
            width: parent.width
            height: 1
            color: root.palette.mid
        }
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 4

        Label {
            objectName: "composerHint"
            Layout.fillWidth: true
            visible: text.length > 0
            text: ChatController.composerHint
            wrapMode: Text.WordWrap
            opacity: 0.75
        }

        RowLayout {
            Layout.fillWidth: true
            spacing: 8

            ScrollView {
                Layout.fillWidth: true
                Layout.preferredHeight: Math.min(Math.max(input.implicitHeight, 40), 160)
                TextArea {
                    id: input
                    objectName: "composerInput"
                    enabled: root.modelLoaded
                    wrapMode: TextEdit.Wrap
                    selectByMouse: true
                    placeholderText: root.modelLoaded ? qsTr("Message (Enter sends, Shift+Enter for a new line)")
                                                      : qsTr("Load a model to start chatting")
                    Accessible.name: qsTr("Message to send")
                    Keys.onPressed: (event) => {
                        if ((event.key === Qt.Key_Return || event.key === Qt.Key_Enter)
                                && !(event.modifiers & Qt.ShiftModifier)) {
                            root.send()
                            event.accepted = true
                        }
                    }
                }
            }
            Button {
                objectName: "sendButton"
                visible: !ChatController.generating
                text: qsTr("Send")
                highlighted: true
                enabled: root.modelLoaded && input.text.trim().length > 0
                Accessible.name: qsTr("Send message")
                onClicked: root.send()
            }
            Button {
                objectName: "stopButton"
                visible: ChatController.generating
                text: qsTr("Stop")
                Accessible.name: qsTr("Stop the reply (Esc)")
                ToolTip.visible: hovered
                ToolTip.text: qsTr("Stop (Esc)")
                onClicked: ChatController.stop()
            }
        }
    }
}
